CREATE TABLE `analytics_daily` (
	`publication_id` text NOT NULL,
	`day` text NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	`hits_bots` integer DEFAULT 0 NOT NULL,
	`hits_assets` integer DEFAULT 0 NOT NULL,
	`hits_not_found` integer DEFAULT 0 NOT NULL,
	`visitors` integer DEFAULT 0 NOT NULL,
	`clicks` integer DEFAULT 0 NOT NULL,
	`downloads` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`publication_id`, `day`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_daily_dims` (
	`publication_id` text NOT NULL,
	`day` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`publication_id`, `kind`, `day`, `value`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_hourly` (
	`publication_id` text NOT NULL,
	`hour` text NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	`hits_bots` integer DEFAULT 0 NOT NULL,
	`hits_assets` integer DEFAULT 0 NOT NULL,
	`hits_not_found` integer DEFAULT 0 NOT NULL,
	`visitors` integer DEFAULT 0 NOT NULL,
	`clicks` integer DEFAULT 0 NOT NULL,
	`downloads` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`publication_id`, `hour`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_hourly_dims` (
	`publication_id` text NOT NULL,
	`hour` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`publication_id`, `kind`, `hour`, `value`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_salts` (
	`day` text PRIMARY KEY NOT NULL,
	`salt` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `analytics_totals` (
	`publication_id` text PRIMARY KEY NOT NULL,
	`hits_all_time` integer DEFAULT 0 NOT NULL,
	`first_event_at` text NOT NULL,
	`last_event_at` text NOT NULL,
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `analytics_visitors` (
	`publication_id` text NOT NULL,
	`day` text NOT NULL,
	`hash` text NOT NULL,
	PRIMARY KEY(`day`, `publication_id`, `hash`)
) WITHOUT ROWID;
