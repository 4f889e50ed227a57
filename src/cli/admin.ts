// Operator commands. (Filled in by the accounts work: users, accounts, plans, keys, bootstrap.)
export async function admin(_argv: string[]): Promise<number> {
  console.error("pier admin: not available yet");
  return 2;
}
