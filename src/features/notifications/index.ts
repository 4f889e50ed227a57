// The notifications feature: account notifications.
// What other features may use of it: they import "../notifications", never a file inside this folder.
// (Nothing yet: no other feature uses this one; its routes are mounted by features/index.ts.)
