import { t } from "elysia";

const DeclaredBlob = {
  byte_size: t.Integer({ minimum: 0 }),
  checksum: t.String({ maxLength: 64, description: "Base64 MD5 of the bytes (sent again as Content-MD5)." }),
  content_type: t.Optional(t.String({ maxLength: 200 })),
  sha256: t.String({ maxLength: 64, description: "Hex SHA-256 of the bytes." }),
};

export const DirectUploadBody = t.Object({
  bucket_id: t.String({ maxLength: 64 }),
  path: t.String({ minLength: 1, maxLength: 4096 }),
  blob: t.Object({
    filename: t.Optional(t.String({ maxLength: 1024 })),
    ...DeclaredBlob,
    purpose: t.Optional(t.String({ maxLength: 40 })),
  }),
  account_id: t.Optional(t.String()),
});

export const SessionParams = t.Object({ id: t.String({ maxLength: 64 }), sid: t.String({ maxLength: 64 }) });
export const BucketParams = t.Object({ id: t.String({ maxLength: 64 }) });

export const CreateSessionBody = t.Object({
  delete_missing: t.Optional(t.Boolean({ description: "Full-folder sync: delete files not declared in this session, once, at the final finalize." })),
  expected_file_count: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
  account_id: t.Optional(t.String()),
});

export const DeclareBody = t.Object({
  files: t.Array(t.Object({ path: t.String({ minLength: 1, maxLength: 4096 }), name: t.Optional(t.String({ maxLength: 1024 })), ...DeclaredBlob }), {
    minItems: 1,
    maxItems: 100,
  }),
  account_id: t.Optional(t.String()),
});

export const FinalizeBatchBody = t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })), account_id: t.Optional(t.String()) });
export const FinalizeBody = t.Object({ complete: t.Boolean(), account_id: t.Optional(t.String()) });
