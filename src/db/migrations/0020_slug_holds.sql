-- Slugs a bucket let go (a rename, the bucket deleted) stay reserved for their account for a while (D316).
CREATE TABLE `slug_holds` (
	`slug` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`released_at` text NOT NULL,
	`held_until` text NOT NULL
);
