import * as chrono from 'chrono-node';
import { monthFirst, dayFirst } from '../../../src/ai/local/teacher-chrono';
const ref = { instant: new Date(process.env.NOW ?? '2026-03-04T14:00:00Z'), timezone: Number(process.env.OFF ?? -300) };
for (const t of process.argv.slice(2)) {
  const p = /[\u3400-\u9fff]/.test(t) ? chrono.zh.hans.casual : process.env.DF ? dayFirst : monthFirst;
  for (const r of p.parse(t, ref)) {
    const c = (x: chrono.ParsedComponents) => ['year','month','day','weekday','hour','minute','meridiem','timezoneOffset'].map(k => `${k}=${x.get(k as chrono.Component)}${x.isCertain(k as chrono.Component)?'!':''}`).join(' ');
    console.log(JSON.stringify(t), '→', JSON.stringify(r.text), r.index, c(r.start), r.end ? ' END ' + c(r.end) : '', [...r.tags()].join(','));
  }
}
