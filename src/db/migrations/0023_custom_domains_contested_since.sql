-- A claim on a name another site verified moves it only after a grace period (D319).
ALTER TABLE `custom_domains` ADD `contested_since` text;