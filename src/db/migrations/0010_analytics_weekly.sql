CREATE TABLE `analytics_weekly_dims` (
	`publication_id` text NOT NULL,
	`week` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`publication_id`, `kind`, `week`, `value`),
	FOREIGN KEY (`publication_id`) REFERENCES `publications`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
-- Backfill: each ISO week (keyed by its Monday) is the sum of its stored daily rows.
INSERT INTO `analytics_weekly_dims` (`publication_id`, `week`, `kind`, `value`, `hits`)
SELECT `publication_id`, date(`day`, 'weekday 0', '-6 days'), `kind`, `value`, sum(`hits`)
FROM `analytics_daily_dims`
GROUP BY `publication_id`, `kind`, date(`day`, 'weekday 0', '-6 days'), `value`;
