-- Gate mail budgets count per inbox: a plus tag, Gmail's dots and googlemail.com reach the same one.
DROP INDEX `site_email_codes_pub`;--> statement-breakpoint
DROP INDEX `site_email_codes_email`;--> statement-breakpoint
ALTER TABLE `site_email_codes` ADD `mailbox` text DEFAULT '' NOT NULL;--> statement-breakpoint
-- The inbox of the codes already issued, as mailboxOf (src/sites/gate-limits.ts) computes it.
UPDATE `site_email_codes` SET `mailbox` = (
  SELECT CASE WHEN domain IN ('gmail.com', 'googlemail.com') THEN replace(name, '.', '') || '@gmail.com' ELSE name || '@' || domain END
  FROM (SELECT CASE WHEN instr(local, '+') > 0 THEN substr(local, 1, instr(local, '+') - 1) ELSE local END AS name, domain
        FROM (SELECT substr(`email`, 1, instr(`email`, '@') - 1) AS local, substr(`email`, instr(`email`, '@') + 1) AS domain))
);--> statement-breakpoint
CREATE INDEX `site_email_codes_pub_mailbox` ON `site_email_codes` (`publication_id`,`mailbox`);--> statement-breakpoint
CREATE INDEX `site_email_codes_mailbox` ON `site_email_codes` (`mailbox`,`created_at`);