import { PGlite } from '@electric-sql/pglite';
const t=()=>process.cpuUsage(); const ms=(a)=>{const d=process.cpuUsage(a);return ((d.user+d.system)/1000).toFixed(0)};
let a=t(); let w=Date.now(); const pg = await PGlite.create(); console.log('create', ms(a), 'wall', Date.now()-w);
const dump = await pg.dumpDataDir('none'); console.log('dump size', dump.size);
a=t(); w=Date.now(); const pg2 = await PGlite.create({loadDataDir: dump}); console.log('load', ms(a), 'wall', Date.now()-w);
a=t(); w=Date.now(); const pg3 = await PGlite.create(); console.log('create2', ms(a), 'wall', Date.now()-w);
