-- The per-account cap on slug holds keeps an account's newest (D316).
CREATE INDEX `slug_holds_account` ON `slug_holds` (`account_id`,`released_at`);