CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text NOT NULL,
	`read_only` integer DEFAULT false NOT NULL,
	`read_only_reason` text,
	`last_dashboard_visit_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`user_id` text,
	`label` text NOT NULL,
	`token_hash` text NOT NULL,
	`display_prefix` text NOT NULL,
	`kind` text NOT NULL,
	`permission_scope` text NOT NULL,
	`bucket_access` text DEFAULT 'all' NOT NULL,
	`bucket_permissions` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`expires_at` text,
	`revoked_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_token_hash` ON `api_keys` (`token_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `invites` (
	`id` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`email` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`used_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invites_code_hash` ON `invites` (`code_hash`);--> statement-breakpoint
CREATE TABLE `memberships` (
	`account_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`account_id`, `user_id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `memberships_user` ON `memberships` (`user_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`data` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`read_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notifications_account` ON `notifications` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text,
	`remember` integer DEFAULT false NOT NULL,
	`user_agent` text DEFAULT '' NOT NULL,
	`ip` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`display_name` text DEFAULT '' NOT NULL,
	`is_instance_admin` integer DEFAULT false NOT NULL,
	`totp_sealed` text,
	`totp_enabled_at` text,
	`last_login_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE TABLE `bucket_locks` (
	`bucket_id` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`holder_kind` text NOT NULL,
	`holder_id` text NOT NULL,
	`message` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `bucket_variables` (
	`bucket_id` text NOT NULL,
	`name` text NOT NULL,
	`secret` integer NOT NULL,
	`value` text,
	`sealed` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`bucket_id`, `name`),
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `buckets` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`tag_paths` text DEFAULT '[]' NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`archived_at` text,
	`deletion` text,
	`visibility_locked_at` text,
	`visibility_locked_by` text,
	`visibility_lock_reason` text,
	`revision` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `buckets_account` ON `buckets` (`account_id`,`archived_at`);--> statement-breakpoint
CREATE TABLE `deleted_buckets` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`deleted_by` text NOT NULL,
	`deleted_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `deleted_buckets_account` ON `deleted_buckets` (`account_id`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`payload` text DEFAULT '{}' NOT NULL,
	`status` text NOT NULL,
	`unique_key` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer DEFAULT 5 NOT NULL,
	`run_at` text NOT NULL,
	`lease_until` text,
	`worker_id` text,
	`last_error` text,
	`result` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE INDEX `jobs_due` ON `jobs` (`status`,`run_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_unique_active` ON `jobs` (`unique_key`) WHERE status in ('queued','running');--> statement-breakpoint
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
CREATE INDEX `upload_entries_bucket` ON `upload_entries` (`bucket_id`);--> statement-breakpoint
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
CREATE INDEX `upload_sessions_closed` ON `upload_sessions` (`status`,`closed_at`);--> statement-breakpoint
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
	`root_directory` text DEFAULT '' NOT NULL,
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
CREATE INDEX `mail_outbox_created` ON `mail_outbox` (`created_at`);--> statement-breakpoint
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
CREATE INDEX `mail_messages_received` ON `mail_messages` (`bucket_id`,`received_at`);--> statement-breakpoint
CREATE TABLE `agent_activity` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`credential_kind` text NOT NULL,
	`credential_id` text NOT NULL,
	`user_id` text,
	`fingerprint` text NOT NULL,
	`user_agent` text DEFAULT '' NOT NULL,
	`agent` text DEFAULT '' NOT NULL,
	`agent_client` text DEFAULT '' NOT NULL,
	`agent_version` text DEFAULT '' NOT NULL,
	`run_id` text DEFAULT '' NOT NULL,
	`project` text DEFAULT '' NOT NULL,
	`task` text DEFAULT '' NOT NULL,
	`request_count` integer DEFAULT 0 NOT NULL,
	`last_method` text DEFAULT '' NOT NULL,
	`last_path` text DEFAULT '' NOT NULL,
	`first_seen_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_activity_fingerprint` ON `agent_activity` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `agent_activity_account` ON `agent_activity` (`account_id`,`last_seen_at`);--> statement-breakpoint
CREATE TABLE `agent_login_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`user_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `agent_login_codes_email` ON `agent_login_codes` (`email`,`created_at`);--> statement-breakpoint
CREATE TABLE `login_links` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`redirect_path` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `oauth_auth_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`client_name` text NOT NULL,
	`redirect_uris` text DEFAULT '[]' NOT NULL,
	`grant_types` text DEFAULT '[]' NOT NULL,
	`response_types` text DEFAULT '[]' NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `oauth_device_codes` (
	`device_code_hash` text PRIMARY KEY NOT NULL,
	`user_code` text NOT NULL,
	`client_id` text NOT NULL,
	`scope` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`interval_seconds` integer NOT NULL,
	`last_polled_at` text,
	`grant_id` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_device_codes_user_code` ON `oauth_device_codes` (`user_code`);--> statement-breakpoint
CREATE TABLE `oauth_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`account_id` text NOT NULL,
	`user_id` text NOT NULL,
	`flow` text NOT NULL,
	`scope` text NOT NULL,
	`permission_scope` text NOT NULL,
	`api_key_id` text,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text,
	`revoked_reason` text,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`api_key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `oauth_grants_account` ON `oauth_grants` (`account_id`);--> statement-breakpoint
CREATE TABLE `oauth_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`kind` text NOT NULL,
	`grant_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_tokens_grant` ON `oauth_tokens` (`grant_id`);