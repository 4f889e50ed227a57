CREATE TABLE `bucket_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`number` integer NOT NULL,
	`kind` text NOT NULL,
	`comment` text DEFAULT '' NOT NULL,
	`author` text NOT NULL,
	`changed_count` integer NOT NULL,
	`file_count` integer NOT NULL,
	`total_bytes` integer NOT NULL,
	`restored_from` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bucket_versions_number` ON `bucket_versions` (`bucket_id`,`number`);--> statement-breakpoint
CREATE TABLE `file_changes` (
	`bucket_id` text NOT NULL,
	`path` text NOT NULL,
	`version` integer NOT NULL,
	`file_id` text NOT NULL,
	`sha256` text,
	`size` integer,
	`content_type` text,
	`md5` text,
	PRIMARY KEY(`bucket_id`, `path`, `version`),
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `file_changes_version` ON `file_changes` (`bucket_id`,`version`);--> statement-breakpoint
CREATE INDEX `file_changes_sha256` ON `file_changes` (`sha256`);--> statement-breakpoint
CREATE TABLE `file_locks` (
	`bucket_id` text NOT NULL,
	`path` text NOT NULL,
	`holder_id` text NOT NULL,
	`message` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`bucket_id`, `path`),
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`path` text NOT NULL,
	`sha256` text NOT NULL,
	`size` integer NOT NULL,
	`content_type` text NOT NULL,
	`md5` text NOT NULL,
	`version_count` integer DEFAULT 1 NOT NULL,
	`bucket_version` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `files_bucket_path` ON `files` (`bucket_id`,`path`);--> statement-breakpoint
CREATE INDEX `files_sha256` ON `files` (`sha256`);--> statement-breakpoint
CREATE TABLE `upload_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`path` text NOT NULL,
	`sha256` text NOT NULL,
	`size` integer NOT NULL,
	`md5` text NOT NULL,
	`content_type` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`finalized_at` text,
	FOREIGN KEY (`session_id`) REFERENCES `upload_sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `upload_entries_session` ON `upload_entries` (`session_id`,`status`,`path`);--> statement-breakpoint
CREATE INDEX `upload_entries_sha256` ON `upload_entries` (`sha256`);--> statement-breakpoint
CREATE INDEX `upload_entries_due` ON `upload_entries` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `upload_entries_finalized` ON `upload_entries` (`status`,`finalized_at`);--> statement-breakpoint
CREATE TABLE `upload_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`status` text NOT NULL,
	`delete_missing` integer NOT NULL,
	`expected_file_count` integer NOT NULL,
	`kind` text DEFAULT 'batch' NOT NULL,
	`committed_count` integer DEFAULT 0 NOT NULL,
	`deleted_count` integer DEFAULT 0 NOT NULL,
	`last_version_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`closed_at` text,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `upload_sessions_bucket` ON `upload_sessions` (`bucket_id`,`status`);--> statement-breakpoint
CREATE INDEX `upload_sessions_due` ON `upload_sessions` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `upload_sessions_closed` ON `upload_sessions` (`status`,`closed_at`);