// Request schemas of the analytics endpoints. range/from/to are checked by the service
// (window.ts), so every bad value gets the same 422 VALIDATION_FAILED naming its field.
import { t } from "elysia";

export const AnalyticsQuery = t.Object({
  range: t.Optional(t.String({ maxLength: 16, description: "24h (24 UTC hours), 7d (default), 30d or 90d (local days of the account's time_zone)." })),
  from: t.Optional(
    t.String({ maxLength: 32, description: "First day, YYYY-MM-DD (a date in the account's time_zone, GET /api/v1/account), with to; overrides range." }),
  ),
  to: t.Optional(t.String({ maxLength: 32, description: "Last day, YYYY-MM-DD (the account's time_zone), inclusive; at most 90 days after from." })),
  account_id: t.Optional(t.String()),
});

export const PublicationParams = t.Object({ id: t.String({ maxLength: 64 }) });
