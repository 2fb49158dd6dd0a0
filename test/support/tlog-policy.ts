// An independent reader of c2sp.org/tlog-policy, written from the specification's text for the tests (not from
// core/witness-policy.ts): it checks that what Timeseal publishes as keys/witnesses is a policy any reader of the
// format takes, and gives a second opinion on the quorum. It keeps only what the tests compare: the witnesses'
// names and vkey texts, the log vkeys, and a predicate over the set of witnesses that cosigned.
//
// From the spec: line based; items separated by spaces and tabs only; leading/trailing whitespace allowed; empty
// and comment ('#') lines ignored; `log <vkey> [<url>]`; `witness <name> <vkey> [<url>]`; `group <name> all|any|<k>
// <name>...` with members defined on preceding lines, each at most once, n >= 1, 1 <= k <= n; exactly one
// `quorum <name>` naming something defined earlier or `none`; witnesses and groups share one namespace; `none`
// is predefined and no member; no two logs and no two witnesses with the same public key.

export interface ReadPolicy {
  logs: string[];
  witnesses: Map<string, string>;
  satisfied(cosigned: ReadonlySet<string>): boolean;
}

const keyBytes = (vkey: string): string => {
  const parts = vkey.split('+');
  if (parts.length < 3 || parts[0] === '' || !/^[0-9a-f]{8}$/.test(parts[1]!)) throw new Error(`not a vkey: ${vkey}`);
  return parts.slice(2).join('+');
};

export function readTlogPolicy(text: string): ReadPolicy {
  const logs: string[] = [];
  const witnesses = new Map<string, string>();
  const rules = new Map<string, (c: ReadonlySet<string>) => boolean>();
  let quorum: ((c: ReadonlySet<string>) => boolean) | undefined;
  const seenKeys = { log: new Set<string>(), witness: new Set<string>() };
  for (const line of text.split('\n')) {
    const trimmed = line.replace(/^[ \t]+|[ \t]+$/g, '');
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(trimmed.replace(/\t/g, ' '))) throw new Error('control character');
    const items = trimmed.split(/[ \t]+/);
    switch (items[0]) {
      case 'log': {
        if (items.length !== 2 && items.length !== 3) throw new Error(`bad log line: ${line}`);
        const k = keyBytes(items[1]!);
        if (seenKeys.log.has(k)) throw new Error('duplicate log');
        seenKeys.log.add(k);
        logs.push(items[1]!);
        break;
      }
      case 'witness': {
        if (items.length !== 3 && items.length !== 4) throw new Error(`bad witness line: ${line}`);
        const [, name, vkey] = items as [string, string, string];
        const k = keyBytes(vkey);
        if (name === 'none' || rules.has(name)) throw new Error(`name reused: ${name}`);
        if (seenKeys.witness.has(k)) throw new Error('duplicate witness');
        seenKeys.witness.add(k);
        witnesses.set(name, vkey);
        rules.set(name, (c) => c.has(name));
        break;
      }
      case 'group': {
        if (items.length < 4) throw new Error(`bad group line: ${line}`);
        const [, name, kText, ...members] = items as [string, string, string, ...string[]];
        if (name === 'none' || rules.has(name)) throw new Error(`name reused: ${name}`);
        if (new Set(members).size !== members.length) throw new Error('member listed twice');
        const memberRules = members.map((m) => {
          const r = rules.get(m);
          if (r === undefined) throw new Error(`undefined member ${m}`);
          return r;
        });
        let k: number;
        if (kText === 'all') k = members.length;
        else if (kText === 'any') k = 1;
        else if (/^[0-9]+$/.test(kText)) k = Number.parseInt(kText, 10);
        else throw new Error(`bad threshold ${kText}`);
        if (k < 1 || k > members.length) throw new Error(`threshold out of range: ${kText}`);
        rules.set(name, (c) => memberRules.reduce((n, r) => n + (r(c) ? 1 : 0), 0) >= k);
        break;
      }
      case 'quorum': {
        if (items.length !== 2 || quorum !== undefined) throw new Error('bad or second quorum line');
        if (items[1] === 'none') quorum = () => true;
        else {
          const r = rules.get(items[1]!);
          if (r === undefined) throw new Error(`undefined quorum ${items[1]}`);
          quorum = r;
        }
        break;
      }
      default:
        throw new Error(`unknown line: ${line}`);
    }
  }
  if (quorum === undefined) throw new Error('no quorum line');
  return { logs, witnesses, satisfied: quorum };
}
