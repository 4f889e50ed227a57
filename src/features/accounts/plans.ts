// Plans and their entitlements. Three are built in (free, pro, and owner for the instance
// admin's own account); operators add or override plans with a JSON file (PIER_PLANS_FILE).
// Limits are numbers read by the features that enforce them.
import { readFileSync } from "node:fs";
import { ConfigError } from "../../config";

export interface Entitlements {
  /** Permanent (non-preview) live websites. */
  max_live_sites: number;
  /** password / require_email access on main sites. */
  protected_sites: boolean;
  max_protected_sites: number;
  named_api_keys: boolean;
  max_buckets: number;
  max_custom_domains: number;
  form_submission_quota: number;
  /** Days a Free site stays active without a signed-in dashboard visit; 0 = never expires. */
  site_renewal_days: number;
  github_sync: boolean;
  paid: boolean;
  /** Analytics beyond all-time hits (views, visitors, top lists, daily figures). */
  analytics_details: boolean;
  /** Deploys kept per site for rollback; older ones are pruned and their blobs collected. */
  deploy_history: number;
}

export interface Plan {
  id: string;
  name: string;
  entitlements: Entitlements;
}

/** "No limit" as a JSON-safe number: far beyond what one instance serves. */
export const UNLIMITED = 1_000_000_000;

export const builtInPlans: Plan[] = [
  {
    id: "free",
    name: "Free",
    entitlements: {
      max_live_sites: 1,
      protected_sites: false,
      max_protected_sites: 0,
      named_api_keys: false,
      max_buckets: 100,
      max_custom_domains: 0,
      form_submission_quota: 100,
      site_renewal_days: 30,
      github_sync: false,
      paid: false,
      analytics_details: true,
      deploy_history: 20,
    },
  },
  {
    id: "pro",
    name: "Pro",
    entitlements: {
      max_live_sites: 100,
      protected_sites: true,
      max_protected_sites: 100,
      named_api_keys: true,
      max_buckets: 10_000,
      max_custom_domains: 20,
      form_submission_quota: 10_000,
      site_renewal_days: 0,
      github_sync: true,
      paid: true,
      analytics_details: true,
      deploy_history: 20,
    },
  },
  {
    // A self-hosted instance is not a sales funnel: the person running it gets every capability
    // and no renewal. Nobody pays for it, hence paid: false (no billing shown).
    id: "owner",
    name: "Owner",
    entitlements: {
      max_live_sites: UNLIMITED,
      protected_sites: true,
      max_protected_sites: UNLIMITED,
      named_api_keys: true,
      max_buckets: UNLIMITED,
      max_custom_domains: UNLIMITED,
      form_submission_quota: UNLIMITED,
      site_renewal_days: 0,
      github_sync: true,
      paid: false,
      analytics_details: true,
      deploy_history: 20,
    },
  },
];

export class PlanCatalog {
  private readonly plans = new Map<string, Plan>();

  constructor(plans: Plan[]) {
    for (const p of plans) this.plans.set(p.id, p);
  }

  static load(file: string | null, defaultPlan: string, ownerPlan = "owner"): PlanCatalog {
    const plans = builtInPlans.map((p) => ({ ...p, entitlements: { ...p.entitlements } }));
    if (file) {
      let extra: unknown;
      try {
        extra = JSON.parse(readFileSync(file, "utf8"));
      } catch (e) {
        throw new ConfigError(`PIER_PLANS_FILE ${file} is not readable JSON: ${(e as Error).message}`);
      }
      if (!Array.isArray(extra)) throw new ConfigError(`PIER_PLANS_FILE must hold a JSON array of plans`);
      for (const raw of extra as Array<Record<string, unknown>>) {
        if (typeof raw.id !== "string" || !/^[a-z0-9_-]{1,32}$/.test(raw.id)) throw new ConfigError(`plan id must match [a-z0-9_-]{1,32}`);
        const base = plans.find((p) => p.id === raw.id) ?? plans.find((p) => p.id === (raw.extends ?? "free"))!;
        const ent = { ...base.entitlements, ...(raw.entitlements as object | undefined) };
        for (const [k, v] of Object.entries(ent)) {
          const expected = typeof builtInPlans[0]!.entitlements[k as keyof Entitlements];
          if (expected === "undefined") throw new ConfigError(`plan ${raw.id}: unknown entitlement "${k}"`);
          if (typeof v !== expected) throw new ConfigError(`plan ${raw.id}: entitlement "${k}" must be a ${expected}`);
        }
        const plan = { id: raw.id, name: typeof raw.name === "string" ? raw.name : raw.id, entitlements: ent };
        const i = plans.findIndex((p) => p.id === raw.id);
        if (i >= 0) plans[i] = plan;
        else plans.push(plan);
      }
    }
    const catalog = new PlanCatalog(plans);
    if (!catalog.plans.has(defaultPlan)) throw new ConfigError(`PIER_DEFAULT_PLAN "${defaultPlan}" is not a defined plan (${catalog.ids().join(", ")})`);
    if (!catalog.plans.has(ownerPlan)) throw new ConfigError(`PIER_OWNER_PLAN "${ownerPlan}" is not a defined plan (${catalog.ids().join(", ")})`);
    return catalog;
  }

  ids(): string[] {
    return [...this.plans.keys()];
  }

  has(id: string): boolean {
    return this.plans.has(id);
  }

  /** Unknown plan ids (e.g. removed from the plans file) fall back to Free's entitlements. */
  get(id: string): Plan {
    return this.plans.get(id) ?? this.plans.get("free")!;
  }
}
