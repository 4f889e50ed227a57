ALTER TABLE `deploys` ADD `sequence` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `deploys` ADD `trigger` text DEFAULT 'api' NOT NULL;--> statement-breakpoint
ALTER TABLE `deploys` ADD `pruned_at` text;--> statement-breakpoint
CREATE INDEX `deploys_publication_sequence` ON `deploys` (`publication_id`,`sequence`);--> statement-breakpoint
UPDATE `deploys` SET `sequence` = (SELECT count(*) FROM `deploys` AS `d2` WHERE `d2`.`publication_id` = `deploys`.`publication_id` AND (`d2`.`created_at` < `deploys`.`created_at` OR (`d2`.`created_at` = `deploys`.`created_at` AND `d2`.`id` <= `deploys`.`id`)));
