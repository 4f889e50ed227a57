CREATE TABLE `github_user_authorizations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`github_user_id` integer NOT NULL,
	`github_login` text NOT NULL,
	`refresh_token_sealed` text,
	`refresh_token_expires_at` text,
	`access_token_sealed` text,
	`linked_by_user_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `github_user_authorization_account` ON `github_user_authorizations` (`account_id`,`github_user_id`);