// Secrets at rest: AES-256-GCM under purpose-specific keys derived (HKDF-SHA256) from the
// instance secret. Tokens and keys: only their SHA-256 is stored (they are high-entropy,
// so a fast hash is enough; passwords use argon2id through Bun.password instead).
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

export type KeyPurpose = "bucket-variables" | "form-submissions" | "totp" | "csrf" | "storage-url" | "site-cookie" | "github" | "signin" | "form-challenge";

export class SecretBox {
  private readonly keys = new Map<KeyPurpose, Buffer>();
  constructor(private readonly masterKey: string) {
    if (masterKey.length < 32) throw new Error("secret key must be at least 32 characters");
  }

  key(purpose: KeyPurpose): Buffer {
    let k = this.keys.get(purpose);
    if (!k) {
      k = Buffer.from(hkdfSync("sha256", this.masterKey, "pier", purpose, 32));
      this.keys.set(purpose, k);
    }
    return k;
  }

  /** Encrypt to `v1.<iv>.<tag>.<ciphertext>` (base64url). `aad` binds the value to its owner row. */
  seal(purpose: KeyPurpose, plaintext: string, aad = ""): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key(purpose), iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(".");
  }

  open(purpose: KeyPurpose, sealed: string, aad = ""): string {
    const [v, iv, tag, ct] = sealed.split(".");
    if (v !== "v1" || !iv || !tag || ct === undefined) throw new Error("unrecognised sealed value");
    const decipher = createDecipheriv("aes-256-gcm", this.key(purpose), Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  }

  /** HMAC-SHA256 (base64url) for signed tokens and cookies. */
  sign(purpose: KeyPurpose, data: string): string {
    return createHmac("sha256", this.key(purpose)).update(data).digest("base64url");
  }

  verify(purpose: KeyPurpose, data: string, signature: string): boolean {
    return safeEqual(this.sign(purpose, data), signature);
  }
}

export function sha256Hex(value: string | Uint8Array): string {
  return createHash("sha256").update(value).digest("hex");
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
