import { PGlite } from '@electric-sql/pglite';
import { readdir, readFile } from 'node:fs/promises';
const ms=(a: NodeJS.CpuUsage)=>{const d=process.cpuUsage(a);return ((d.user+d.system)/1000).toFixed(0)};
const pg = await PGlite.create();
const dir = new URL('./store/migrations/', import.meta.url).pathname;
const files = (await readdir(dir)).filter(f=>f.endsWith('.sql')).sort();
const sqls = await Promise.all(files.map(f=>readFile(dir+f,'utf8')));
for (let i=0;i<6;i++){
  const a=process.cpuUsage(); const w=performance.now();
  await pg.exec(`CREATE SCHEMA s${i}; SET search_path TO s${i};`);
  if (i%2===0) { for (const s of sqls) await pg.transaction(async tx=>{ await tx.exec(s); }); }
  else await pg.exec(sqls.join('\n'));
  console.log(i%2===0?'per-file':'one-exec', ms(a), (performance.now()-w).toFixed(0));
}
const a=process.cpuUsage(); await pg.exec('DROP SCHEMA s0 CASCADE'); console.log('drop', ms(a));
const d = await pg.dumpDataDir('none'); const b=process.cpuUsage(); const p2 = await PGlite.create({loadDataDir: d}); console.log('load with 5 schemas', ms(b), d.size);
