CREATE TABLE `custom_domains` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`hostname` text NOT NULL,
	`status` text NOT NULL,
	`failure_reason` text,
	`ownership_token` text NOT NULL,
	`verified_at` text,
	`activated_at` text,
	`checks` text DEFAULT '[]' NOT NULL,
	`last_checked_at` text,
	`next_check_at` text,
	`check_attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `custom_domains_bucket` ON `custom_domains` (`bucket_id`);--> statement-breakpoint
CREATE INDEX `custom_domains_account` ON `custom_domains` (`account_id`);--> statement-breakpoint
CREATE INDEX `custom_domains_hostname` ON `custom_domains` (`hostname`);--> statement-breakpoint
CREATE INDEX `custom_domains_next_check` ON `custom_domains` (`next_check_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `custom_domains_verified_hostname` ON `custom_domains` (`hostname`) WHERE verified_at IS NOT NULL;