CREATE TABLE `github_installations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`installation_id` integer NOT NULL,
	`target_login` text NOT NULL,
	`target_type` text NOT NULL,
	`state` text NOT NULL,
	`linked_by_user_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `github_installation_account` ON `github_installations` (`account_id`,`installation_id`);--> statement-breakpoint
CREATE INDEX `github_installation_id` ON `github_installations` (`installation_id`);--> statement-breakpoint
CREATE TABLE `github_setup_states` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text NOT NULL,
	`bucket_id` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `git_sync_connections` ADD `github_installation_id` integer;--> statement-breakpoint
ALTER TABLE `git_sync_connections` ADD `github_repository_id` integer;--> statement-breakpoint
ALTER TABLE `git_sync_connections` ADD `github_repository` text;