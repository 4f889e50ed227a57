-- What serving processes must forget (src/sites/changes.ts): triggers log the publication whose
-- serving facts changed, whichever code path (or process) wrote them, so a worker drops only that
-- publication's cached lookups instead of every site on any commit. A NULL publication_id means
-- "forget every site". Columns that do not change what a site serves (publish progress, counts,
-- timestamps) do not fire: test/unit/site-changes.test.ts fails when a column is left unclassified.
CREATE TABLE `site_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`publication_id` text
);
--> statement-breakpoint
-- Bounded without a timer: each change drops the ones 10,000 behind it (a reader that fell that
-- far behind sees the gap and forgets everything).
CREATE TRIGGER `site_changes_bound` AFTER INSERT ON `site_changes` BEGIN
	DELETE FROM `site_changes` WHERE `seq` <= NEW.`seq` - 10000;
END;
--> statement-breakpoint
CREATE TRIGGER `site_changes_publication_insert` AFTER INSERT ON `publications` BEGIN
	INSERT INTO `site_changes` (`publication_id`) VALUES (NEW.`id`);
END;
--> statement-breakpoint
CREATE TRIGGER `site_changes_publication_delete` AFTER DELETE ON `publications` BEGIN
	INSERT INTO `site_changes` (`publication_id`) VALUES (OLD.`id`);
END;
--> statement-breakpoint
CREATE TRIGGER `site_changes_publication_update` AFTER UPDATE OF
	`id`, `bucket_id`, `account_id`, `kind`, `public_slug`, `title`, `description`, `status`, `expires_at`, `site_mode`,
	`access_mode`, `password_hash`, `access_version`, `tracking_enabled`, `analytics_enabled`, `client_events_enabled`,
	`clean_urls`, `current_deploy_id`
ON `publications`
WHEN OLD.`id` IS NOT NEW.`id` OR OLD.`bucket_id` IS NOT NEW.`bucket_id` OR OLD.`account_id` IS NOT NEW.`account_id`
	OR OLD.`kind` IS NOT NEW.`kind` OR OLD.`public_slug` IS NOT NEW.`public_slug` OR OLD.`title` IS NOT NEW.`title`
	OR OLD.`description` IS NOT NEW.`description` OR OLD.`status` IS NOT NEW.`status` OR OLD.`expires_at` IS NOT NEW.`expires_at`
	OR OLD.`site_mode` IS NOT NEW.`site_mode` OR OLD.`access_mode` IS NOT NEW.`access_mode`
	OR OLD.`password_hash` IS NOT NEW.`password_hash` OR OLD.`access_version` IS NOT NEW.`access_version`
	OR OLD.`tracking_enabled` IS NOT NEW.`tracking_enabled` OR OLD.`analytics_enabled` IS NOT NEW.`analytics_enabled`
	OR OLD.`client_events_enabled` IS NOT NEW.`client_events_enabled` OR OLD.`clean_urls` IS NOT NEW.`clean_urls`
	OR OLD.`current_deploy_id` IS NOT NEW.`current_deploy_id`
BEGIN
	INSERT INTO `site_changes` (`publication_id`) VALUES (OLD.`id`);
	INSERT INTO `site_changes` (`publication_id`) SELECT NEW.`id` WHERE NEW.`id` IS NOT OLD.`id`;
END;
--> statement-breakpoint
-- The account's name is on its sites' Auto-Index pages.
CREATE TRIGGER `site_changes_account_name` AFTER UPDATE OF `name` ON `accounts` WHEN OLD.`name` IS NOT NEW.`name` BEGIN
	INSERT INTO `site_changes` (`publication_id`) SELECT `id` FROM `publications` WHERE `account_id` = NEW.`id`;
END;
--> statement-breakpoint
-- A custom domain serves its bucket's main site: the domain's sites forget it (and with it every
-- cached custom host).
CREATE TRIGGER `site_changes_domain_insert` AFTER INSERT ON `custom_domains` BEGIN
	INSERT INTO `site_changes` (`publication_id`) SELECT `id` FROM `publications` WHERE `bucket_id` = NEW.`bucket_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `site_changes_domain_delete` AFTER DELETE ON `custom_domains` BEGIN
	INSERT INTO `site_changes` (`publication_id`) SELECT `id` FROM `publications` WHERE `bucket_id` = OLD.`bucket_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `site_changes_domain_update` AFTER UPDATE OF `bucket_id`, `hostname`, `status` ON `custom_domains`
WHEN OLD.`bucket_id` IS NOT NEW.`bucket_id` OR OLD.`hostname` IS NOT NEW.`hostname` OR OLD.`status` IS NOT NEW.`status`
BEGIN
	INSERT INTO `site_changes` (`publication_id`) SELECT `id` FROM `publications` WHERE `bucket_id` IN (OLD.`bucket_id`, NEW.`bucket_id`);
END;
