// The domains feature: custom domains of published sites (DNS checks, activation, replacement).
// What other features and src/ may use: they import "../domains", never a file inside this folder.
import { registerBucketRemoval } from "../buckets";
import { forgetBucketCertificates } from "./service";

registerBucketRemoval(forgetBucketCertificates);

export { customDomainWantsCertificate } from "./records";
export { activeCustomDomain, activeCustomDomains, customDomainSlug } from "./serving";
export { addDomain, getDomain, listDomains, refreshDomain, removeDomain } from "./service";
export { presentDomain, presentDomainPublication } from "./present";
export { domainRoutes } from "./routes";
// Used by the task table outside src/features.
export { recheckDueDomains } from "./recheck";
