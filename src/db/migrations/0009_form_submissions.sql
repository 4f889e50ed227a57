CREATE TABLE `form_submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`form_name` text NOT NULL,
	`parent_id` text,
	`audience` text,
	`sealed` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`notified_at` text,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `form_submissions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `form_submissions_bucket` ON `form_submissions` (`bucket_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `form_submissions_account` ON `form_submissions` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `form_submissions_parent` ON `form_submissions` (`parent_id`);