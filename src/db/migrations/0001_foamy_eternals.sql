CREATE TABLE `mail_addresses` (
	`local_part` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`enabled` integer NOT NULL,
	`disabled_by_admin_at` text,
	`received_count` integer DEFAULT 0 NOT NULL,
	`last_received_path` text,
	`last_received_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mail_addresses_bucket` ON `mail_addresses` (`bucket_id`);--> statement-breakpoint
CREATE TABLE `mail_messages` (
	`bucket_id` text NOT NULL,
	`folder` text NOT NULL,
	`message_id` text NOT NULL,
	`received_at` text NOT NULL,
	`from_address` text,
	`subject` text,
	`size` integer NOT NULL,
	`attachment_count` integer NOT NULL,
	`read_at` text,
	`read_by` text,
	`last_read_at` text,
	`read_count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`bucket_id`, `folder`),
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mail_messages_received` ON `mail_messages` (`bucket_id`,`received_at`);