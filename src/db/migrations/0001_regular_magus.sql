CREATE TABLE `publish_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`bucket_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`kind` text DEFAULT 'main' NOT NULL,
	`status` text NOT NULL,
	`bucket_revision` integer NOT NULL,
	`delete_missing` integer NOT NULL,
	`files` text NOT NULL,
	`publish_request` text NOT NULL,
	`publication_id` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`finalized_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `publish_sessions_account` ON `publish_sessions` (`account_id`,`status`);--> statement-breakpoint
ALTER TABLE `deploys` ADD `root_directory` text DEFAULT '' NOT NULL;