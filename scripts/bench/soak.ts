/**
 * @module The soak: mixed load (reads and sync invocations in 10-second turns) with the server's RSS
 * sampled every 5 s, to see whether memory settles.
 */
import { type LoadSpec, runLoad } from './load.ts';
import { INVOCATION } from './probes.ts';
import type { ServiceUnderTest } from './processes.ts';
import { progress } from './progress.ts';
import type { Soak } from './results.ts';
import { fmt } from './stats.ts';

/** Mixed load (reads and sync invocations in 10 s turns) for `minutes`, sampling the server's RSS every 5 s. */
export async function runSoak(service: ServiceUnderTest, minutes: number, connections: number): Promise<Soak> {
  progress(`[${service.store}] soak: ${minutes} min of mixed load, RSS every 5 s`);
  const started = performance.now();
  const samples: Soak['samples'] = [];
  const sample = () => {
    const rss = service.rss();
    if (rss !== undefined) samples.push({ atSeconds: Math.round((performance.now() - started) / 1000), rssBytes: rss });
  };
  sample();
  const timer = setInterval(sample, 5_000);
  const auth = { authorization: `Bearer ${service.apiKey}` };
  try {
    let turn = 0;
    while (performance.now() - started < minutes * 60_000) {
      const seconds = Math.max(1, Math.min(10, Math.round((minutes * 60_000 - (performance.now() - started)) / 1000)));
      const spec: LoadSpec =
        turn % 2 === 0
          ? { url: `${service.url}/usage/current`, method: 'GET', headers: auth, connections, seconds }
          : {
              url: `${service.url}/v1/inference`,
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify(INVOCATION),
              connections,
              seconds,
            };
      await runLoad(spec);
      turn += 1;
      if (turn % 6 === 0)
        progress(
          `[${service.store}] soak: ${Math.round((performance.now() - started) / 60_000)} min, RSS ${fmt((samples.at(-1)?.rssBytes ?? 0) / 2 ** 20)} MiB`,
        );
    }
  } finally {
    clearInterval(timer);
  }
  sample();
  const atMinute = samples.find((s) => s.atSeconds >= 60) ?? samples.at(-1)!;
  const end = samples.at(-1)!;
  return { minutes, samples, rssAfterFirstMinute: atMinute.rssBytes, rssAtEnd: end.rssBytes, growth: end.rssBytes / atMinute.rssBytes - 1 };
}
