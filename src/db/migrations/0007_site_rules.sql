ALTER TABLE `deploys` ADD `site_rules` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `site_rules_summary` text;--> statement-breakpoint
ALTER TABLE `publications` ADD `clean_urls` integer DEFAULT true NOT NULL;