// afterCommit: a side effect announced inside a transaction happens only once the data it
// announces is committed — after the outermost transaction, and never after a rollback.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { afterCommit, transaction } from "../../src/db/tx";
import { testDeps, type TestDeps } from "../helpers/deps";

let t: TestDeps;
beforeEach(async () => {
  t = await testDeps();
  t.deps.sqlite.exec("CREATE TABLE tx_probe (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
});
afterEach(() => t.close());

const rows = () =>
  t.deps.sqlite
    .query<{ v: string }, []>("SELECT v FROM tx_probe ORDER BY id")
    .all()
    .map((r) => r.v);
const insert = (v: string) => t.deps.sqlite.query("INSERT INTO tx_probe (v) VALUES (?)").run(v);

describe("afterCommit", () => {
  test("runs after the commit, when the written row is visible", () => {
    const seen: string[][] = [];
    transaction(t.deps.db, (tx) => {
      insert("a");
      afterCommit(tx, () => seen.push(rows()));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual([["a"]]);
  });

  test("a nested transaction's hook waits for the outermost commit", () => {
    const order: string[] = [];
    transaction(t.deps.db, (outer) => {
      transaction(outer, (inner) => afterCommit(inner, () => order.push("hook")));
      order.push("outer body done");
    });
    expect(order).toEqual(["outer body done", "hook"]);
  });

  test("never runs when the transaction rolls back", () => {
    let ran = false;
    expect(() =>
      transaction(t.deps.db, (tx) => {
        insert("doomed");
        afterCommit(tx, () => {
          ran = true;
        });
        throw new Error("refused half-way");
      }),
    ).toThrow("refused half-way");
    expect(ran).toBe(false);
    expect(rows()).toEqual([]);
    // The next transaction does not inherit the discarded hook.
    transaction(t.deps.db, () => insert("b"));
    expect(ran).toBe(false);
  });

  test("outside a transaction it runs at once", () => {
    let ran = false;
    afterCommit(t.deps.db, () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  test("a failing hook does not stop the others; its error reaches the caller after the commit", () => {
    const ran: string[] = [];
    expect(() =>
      transaction(t.deps.db, (tx) => {
        insert("kept");
        afterCommit(tx, () => {
          throw new Error("hook failed");
        });
        afterCommit(tx, () => ran.push("second"));
      }),
    ).toThrow("hook failed");
    expect(ran).toEqual(["second"]);
    expect(rows()).toEqual(["kept"]);
  });
});
