CREATE TABLE `git_sync_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`provider` text NOT NULL,
	`repository_url` text NOT NULL,
	`branch` text NOT NULL,
	`username` text DEFAULT '' NOT NULL,
	`credential_sealed` text,
	`webhook_secret_sealed` text NOT NULL,
	`state` text NOT NULL,
	`initial_direction` text,
	`auto_publish` integer DEFAULT false NOT NULL,
	`last_commit` text,
	`last_version` integer,
	`last_sync_at` text,
	`last_check_at` text,
	`last_error` text,
	`conflicts` text DEFAULT '[]' NOT NULL,
	`ahead` integer DEFAULT 0 NOT NULL,
	`behind` integer DEFAULT 0 NOT NULL,
	`poll_interval_ms` integer NOT NULL,
	`next_poll_at` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `git_sync_bucket` ON `git_sync_connections` (`bucket_id`);--> statement-breakpoint
CREATE INDEX `git_sync_due` ON `git_sync_connections` (`state`,`next_poll_at`);