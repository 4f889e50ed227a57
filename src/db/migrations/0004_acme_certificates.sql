CREATE TABLE `certificates` (
	`host` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`not_after` text,
	`last_error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`issued_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `certificates_next_attempt` ON `certificates` (`next_attempt_at`);