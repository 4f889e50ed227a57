CREATE TABLE `autoindex_templates` (
	`account_id` text PRIMARY KEY NOT NULL,
	`template` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `deploy_files` (
	`deploy_id` text NOT NULL,
	`path` text NOT NULL,
	`blob_sha256` text NOT NULL,
	`size` integer NOT NULL,
	`content_type` text NOT NULL,
	`etag` text NOT NULL,
	`gzip_sha256` text,
	`gzip_size` integer,
	`br_sha256` text,
	`br_size` integer,
	PRIMARY KEY(`deploy_id`, `path`),
	FOREIGN KEY (`deploy_id`) REFERENCES `deploys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deploy_files_blob` ON `deploy_files` (`blob_sha256`);--> statement-breakpoint
CREATE TABLE `deploys` (
	`id` text PRIMARY KEY NOT NULL,
	`publication_id` text NOT NULL,
	`bucket_version_id` text,
	`file_count` integer NOT NULL,
	`total_bytes` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deploys_publication` ON `deploys` (`publication_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `publications` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`public_slug` text NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`status` text NOT NULL,
	`publish_state` text NOT NULL,
	`publish_error` text,
	`publish_enqueued_at` text,
	`publish_started_at` text,
	`publish_completed_at` text,
	`expires_at` text,
	`site_mode` text DEFAULT 'static' NOT NULL,
	`access_mode` text DEFAULT 'public' NOT NULL,
	`password_hash` text,
	`password_sealed` text,
	`access_version` integer DEFAULT 1 NOT NULL,
	`tracking_enabled` integer DEFAULT true NOT NULL,
	`analytics_enabled` integer DEFAULT true NOT NULL,
	`client_events_enabled` integer DEFAULT true NOT NULL,
	`current_deploy_id` text,
	`published_files_count` integer DEFAULT 0 NOT NULL,
	`publish_request` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `publications_kind_slug` ON `publications` (`kind`,`public_slug`);--> statement-breakpoint
CREATE UNIQUE INDEX `publications_bucket_kind` ON `publications` (`bucket_id`,`kind`);--> statement-breakpoint
CREATE INDEX `publications_account` ON `publications` (`account_id`);--> statement-breakpoint
CREATE TABLE `site_email_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`publication_id` text NOT NULL,
	`email` text NOT NULL,
	`code_hash` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `site_email_codes_pub` ON `site_email_codes` (`publication_id`,`email`);--> statement-breakpoint
CREATE TABLE `site_gate_attempts` (
	`publication_id` text NOT NULL,
	`kind` text NOT NULL,
	`client_key` text NOT NULL,
	`failures` integer NOT NULL,
	`window_started_at` text NOT NULL,
	PRIMARY KEY(`publication_id`, `kind`, `client_key`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `site_leads` (
	`publication_id` text NOT NULL,
	`email` text NOT NULL,
	`first_access_at` text NOT NULL,
	`last_access_at` text NOT NULL,
	`access_count` integer DEFAULT 1 NOT NULL,
	PRIMARY KEY(`publication_id`, `email`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `mail_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`to_address` text NOT NULL,
	`subject` text NOT NULL,
	`text_body` text NOT NULL,
	`kind` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `mail_outbox_created` ON `mail_outbox` (`created_at`);