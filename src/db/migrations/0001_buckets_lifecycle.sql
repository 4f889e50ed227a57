CREATE TABLE `deleted_buckets` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`deleted_by` text NOT NULL,
	`deleted_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `deleted_buckets_account` ON `deleted_buckets` (`account_id`);--> statement-breakpoint
ALTER TABLE `buckets` ADD `visibility_lock_reason` text;