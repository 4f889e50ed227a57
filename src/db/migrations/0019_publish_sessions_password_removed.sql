-- Publish sessions kept the site password in clear in publish_request (D261). A pending session
-- that holds one expires now (finalize answers PUBLISH_SESSION_EXPIRED: create a new session), so
-- it can never publish without the password it was given; then the clear copies are removed.
UPDATE `publish_sessions` SET `expires_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE `status` = 'pending' AND json_type(`publish_request`, '$.password') IS NOT NULL AND `expires_at` > strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
--> statement-breakpoint
UPDATE `publish_sessions` SET `publish_request` = json_remove(`publish_request`, '$.password') WHERE json_type(`publish_request`, '$.password') IS NOT NULL;
