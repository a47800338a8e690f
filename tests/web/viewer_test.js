// tests/web/viewer_test.js - the web viewer (web/, scripts/build-web.sh) in a
// real browser: headless chromium driven by puppeteer-core, the page served
// by a private nginx. One case per run:
//   samples    every file of tests/data that `untold` recognises (every
//              format), plus generated ones (lz4 and zstd chunks, a .pak):
//              the page's documents equal `untold info --json` and
//              `validate --deep --json`, the header and list tables show
//              them, and a model covers its projected bounds on the canvas
//              with non-background pixels; a skinned model moves with its
//              clip; a model and its clip dropped on the page open
//              together. Prints the module's sizes and load times; saves the
//              screenshot for the README (--screenshot).
//   hostile    crafted files show the rule id `untold validate` reports, and
//              the page still opens a good file afterwards.
//   streaming  a generated tiled world (`untold cook --tiles`) streamed
//              along a camera path: the page's planner (WASM) fetches with
//              HTTP Range requests and loads/unloads the tiles and levels
//              `untold stream-sim` predicts for the same path.
// Usage: node viewer_test.js CASE --untold BIN --web DIR --data tests/data
//        --node-modules build/node/node_modules --scratch DIR [--screenshot PNG]
// (samples and streaming save a screenshot of the page there.)
// Exit 77 (a skip, with "skipped: <why>") when chromium, emscripten, nginx,
// puppeteer-core, untold or the built viewer is missing.
"use strict";
const fs = require("fs");
const path = require("path");
const assert = require("assert");
const h = require("./harness.js");

const which = process.argv[2];
process.argv.splice(2, 1);
const a = h.args();
const pre = h.prerequisites(a);
const untold = (...argv) => h.untold(a.untold, argv);

let failures = 0;
function check(ok, what) {
  if (!ok) {
    ++failures;
    console.log("FAIL: " + what);
  }
}

// A fresh www tree: the viewer, the samples, and generated files.
function makeSite() {
  const scratch = path.resolve(a.scratch, which);
  fs.rmSync(scratch, { recursive: true, force: true });
  const www = path.join(scratch, "www");
  fs.mkdirSync(path.join(www, "gen"), { recursive: true });
  fs.symlinkSync(path.resolve(a.web), path.join(www, "viewer"));
  fs.symlinkSync(path.resolve(a.data), path.join(www, "samples"));
  return { scratch, www, gen: path.join(www, "gen") };
}

async function withBrowser(site, body) {
  const nginx = await h.startNginx(pre.nginx, path.join(site.scratch, "nginx"), site.www);
  const browser = await h.launch(pre.puppeteer, pre.chromium);
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => check(false, "page error: " + e.message));
    const base = `http://127.0.0.1:${nginx.port}`;
    await body(page, base, nginx);
  } finally {
    await browser.close();
    nginx.stop();
  }
}

async function openViewer(page, base, query) {
  await page.goto(`${base}/viewer/index.html${query || ""}`);
  await page.waitForFunction(() => window.untoldViewer && window.untoldViewer.ready, { timeout: 60000 });
}

const openUrl = (page, url, clips) => page.evaluate((u, c) => window.untoldViewer.openUrl(u, c), url, clips || []);

const withoutFile = (doc) => {
  const c = JSON.parse(JSON.stringify(doc));
  delete c.file;
  return c;
};

// Header rows (every scalar of the info document) and list tables (row counts) as the page shows them.
async function checkTables(page, info, label) {
  const shown = await page.evaluate(() => {
    const header = {};
    for (const tr of document.querySelectorAll("#table-header tr")) header[tr.dataset.key] = tr.querySelector("td").textContent;
    const rows = {};
    for (const t of document.querySelectorAll("table[data-rows]")) rows[t.id] = Number(t.dataset.rows);
    return { header, rows };
  });
  const flat = (prefix, o) => {
    for (const [k, v] of Object.entries(o)) {
      const key = prefix + k;
      if (k === "file" || k === "error") continue;
      if (v !== null && typeof v === "object" && !Array.isArray(v)) flat(key + ".", v);
      else if (!Array.isArray(v)) check(shown.header[key] === String(v), `${label}: header ${key} shows ${shown.header[key]}, untold says ${v}`);
      else if (v.length && v.every((x) => x && typeof x === "object"))
        check(shown.rows["table-" + key] === v.length, `${label}: table ${key} has ${shown.rows["table-" + key]} rows, untold lists ${v.length}`);
    }
  };
  flat("", info);
}

// The dump's lists (meshes, materials, textures, bones, ...) as tables, entities as a tree.
async function checkDumpTables(page, dump, label) {
  if (dump.valid === false) return;
  const shown = await page.evaluate(() => {
    const rows = {};
    for (const t of document.querySelectorAll("table[data-rows]")) rows[t.id] = Number(t.dataset.rows);
    return { rows, entities: document.querySelectorAll("li[data-entity]").length };
  });
  for (const [k, v] of Object.entries(dump)) {
    if (!Array.isArray(v) || !v.length || !v.every((x) => x && typeof x === "object")) continue;
    if (k === "entities" && dump.format === "untold")
      check(shown.entities === v.length, `${label}: the entity tree has ${shown.entities} nodes, untold dump lists ${v.length}`);
    else check(shown.rows["table-" + k] === v.length, `${label}: table ${k} has ${shown.rows["table-" + k]} rows, untold dump lists ${v.length}`);
  }
}

// The canvas: non-background pixels inside the projected bounds, covering a good part of them.
async function checkCanvas(page, label) {
  const r = await page.evaluate(() => {
    const v = window.untoldViewer;
    v.setOverlays({ bounds: false, wireframe: false, normals: false });
    const box = v.pixelBox(), expected = v.projectedBounds();
    v.setOverlays({ bounds: true });
    return { box, expected };
  });
  const { box, expected } = r;
  check(box.count > 0, `${label}: nothing drawn`);
  if (!box.count || !expected) return;
  const e = { x0: Math.max(0, expected.x0), y0: Math.max(0, expected.y0),
              x1: Math.min(box.width, expected.x1), y1: Math.min(box.height, expected.y1) };
  const tol = 2;
  check(box.x0 >= e.x0 - tol && box.y0 >= e.y0 - tol && box.x1 <= e.x1 + tol && box.y1 <= e.y1 + tol,
        `${label}: drawn box ${JSON.stringify(box)} leaves the projected bounds ${JSON.stringify(e)}`);
  check(box.x1 - box.x0 >= 0.3 * (e.x1 - e.x0) && box.y1 - box.y0 >= 0.3 * (e.y1 - e.y0),
        `${label}: drawn box ${JSON.stringify(box)} covers too little of the projected bounds ${JSON.stringify(e)}`);
}

function listSamples(dir, rel = "") {
  const out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...listSamples(dir, r));
    else if (!/\.(md|txt|json|png|gltf|bin)$/i.test(e.name)) out.push(r);
  }
  return out.sort();
}

// ---- samples -------------------------------------------------------------------------

async function samples() {
  const site = makeSite();
  // Generated: the same asset with lz4 and with zstd chunks (the page's
  // JavaScript decoders), and an Urho3D package.
  const minimal = path.join(a.data, "minimal_v4.untold");
  untold("recompress", minimal, "-o", path.join(site.gen, "minimal_lz4.untold"), "--compress", "lz4");
  untold("recompress", minimal, "-o", path.join(site.gen, "minimal_zstd.untold"), "--compress", "zstd");
  const pakdir = path.join(site.scratch, "pak");
  fs.mkdirSync(path.join(pakdir, "Models"), { recursive: true });
  fs.copyFileSync(path.join(a.data, "urho3d/Models/Box.mdl"), path.join(pakdir, "Models/Box.mdl"));
  fs.copyFileSync(path.join(a.data, "urho3d/Models/Cone.mdl"), path.join(pakdir, "Models/Cone.mdl"));
  untold("pak", "create", pakdir, "-o", path.join(site.gen, "models.pak"), "--compress");
  // Large compressed chunks, some decoding to more than four times their
  // size (the reader's growing decode): a flat-roofed city in one file.
  const obj = path.join(site.scratch, "city.obj");
  fs.writeFileSync(obj, cityObj(false));
  for (const c of ["lz4", "zstd"]) untold("cook", obj, "--compress", c, "-o", path.join(site.gen, `city_${c}.untold`));

  const files = [];
  for (const rel of listSamples(a.data)) files.push({ url: "/samples/" + rel, file: path.join(a.data, rel) });
  for (const f of fs.readdirSync(site.gen).sort()) files.push({ url: "/gen/" + f, file: path.join(site.gen, f) });
  const formats = new Set();
  await withBrowser(site, async (page, base) => {
    await openViewer(page, base, "?file=/samples/minimal_v4.untold");
    await page.waitForFunction(() => window.untoldViewer.doc !== null, { timeout: 60000 });
    const first = await page.evaluate(() => ({ module: window.untoldViewer.moduleLoadMs, load: window.untoldViewer.lastLoadMs }));
    let loaded = 0;
    for (const f of files) {
      const info = JSON.parse(untold("info", "--json", f.file))[0];
      if (info.format === null) continue;  // not a format the library reads
      const validate = JSON.parse(untold("validate", "--deep", "--json", f.file)).results[0];
      formats.add(info.format);
      const doc = await openUrl(page, f.url);
      const label = f.url;
      check(!doc.error, `${label}: ${doc.error && doc.error.describe}`);
      if (doc.error) continue;
      ++loaded;
      try {
        assert.deepStrictEqual(withoutFile(doc.info), withoutFile(info));
      } catch (e) {
        check(false, `${label}: the page's info differs from untold info --json:\n${e.message.slice(0, 1500)}`);
      }
      check(doc.validate.valid === validate.valid, `${label}: valid ${doc.validate.valid}, untold validate --deep says ${validate.valid}`);
      const dump = JSON.parse(untold("dump", "--json", f.file));
      try {
        assert.deepStrictEqual(withoutFile(doc.dump), withoutFile(dump));
      } catch (e) {
        check(false, `${label}: the page's dump differs from untold dump --json:\n${e.message.slice(0, 1500)}`);
      }
      await checkTables(page, info, label);
      await checkDumpTables(page, dump, label);
      const posed = await page.evaluate(() => window.untoldViewer.posed);
      if (posed && posed.triangles > 0) await checkCanvas(page, label);
    }
    const calls = await page.evaluate(() => untoldCodecs.calls);
    console.log(`samples: ${loaded} files opened, formats: ${[...formats].sort().join(", ")}; ` +
                `JavaScript codec calls: ${calls.exact} exact, ${calls.prefix} prefix`);
    check(calls.exact >= 4, "the lz4/zstd samples did not go through the JavaScript decoders");
    check(calls.prefix > 0, "no chunk took the growing decode (prefix calls) through the JavaScript decoders");
    for (const need of ["untold", "urho3d-model", "urho3d-animation", "urho3d-package", "udm-binary", "udm-ascii", "assetc-hmesh"])
      check(formats.has(need), "no sample of format " + need);

    // A skinned model posed by its clip: the bounds move with time.
    const jack = await openUrl(page, "/samples/urho3d/Models/Jack.mdl", ["/samples/urho3d/Models/Jack_Walk.ani"]);
    check(jack.scene && jack.scene.animations.length === 1, "Jack.mdl + Jack_Walk.ani: one clip");
    const loadMs = await page.evaluate(() => window.untoldViewer.lastLoadMs);
    const at = (t) => page.evaluate((time) => window.untoldViewer.pose(0, time), t);
    const p1 = await at(0.2), p2 = await at(0.7);
    check(JSON.stringify([p1.min, p1.max]) !== JSON.stringify([p2.min, p2.max]), "Jack's walk does not move the mesh");
    await checkCanvas(page, "Jack.mdl at 0.7 s");
    // Drag and drop: a model and its clip dropped together, as a user does.
    const dropped = await page.evaluate(async () => {
      const dt = new DataTransfer();
      for (const u of ["/samples/urho3d/Models/Jack_Walk.ani", "/samples/urho3d/Models/Jack.mdl"]) {
        const bytes = await (await fetch(u)).arrayBuffer();
        dt.items.add(new File([bytes], u.split("/").pop()));
      }
      window.untoldViewer.doc = null;
      document.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
      for (let i = 0; i < 200 && !window.untoldViewer.doc; ++i) await new Promise((r) => setTimeout(r, 50));
      const d = window.untoldViewer.doc;
      return d && { format: d.format, clips: d.scene && d.scene.animations.length, status: document.getElementById("status").textContent };
    });
    check(dropped && dropped.format === "urho3d-model" && dropped.clips === 1,
          "dropping Jack.mdl with Jack_Walk.ani: " + JSON.stringify(dropped));
    const size = (f) => fs.statSync(path.join(a.web, f)).size;
    console.log(`web: untold.wasm ${size("untold.wasm")} bytes, untold.js ${size("untold.js")} bytes; ` +
                `module start ${first.module.toFixed(0)} ms, minimal_v4.untold ${first.load.toFixed(0)} ms, ` +
                `Jack.mdl + Jack_Walk.ani ${loadMs.toFixed(0)} ms (open, validate, dump, import, pose) in headless chromium`);
    if (a.screenshot) {
      await at(0.7);
      await page.evaluate(() => window.untoldViewer.setOverlays({ wireframe: true, bounds: true }));
      fs.mkdirSync(path.dirname(a.screenshot), { recursive: true });
      await page.screenshot({ path: a.screenshot });
      console.log("screenshot: " + a.screenshot);
    }
  });
}

// ---- hostile -------------------------------------------------------------------------

// After an error the page keeps working: a good model opens and draws.
async function checkStillWorks(page, after) {
  const doc = await openUrl(page, "/samples/urho3d/Models/Box.mdl");
  check(doc.validate && doc.validate.valid === true, `${after}: Box.mdl does not open afterwards`);
  await checkCanvas(page, "Box.mdl after " + after);
}

async function hostile() {
  const site = makeSite();
  const good = fs.readFileSync(path.join(a.data, "minimal_v4.untold"));
  const crafted = {
    "truncated.untold": good.subarray(0, 100),
    "not_a_format.bin": Buffer.from("this is no asset at all, just text"),
    "bad_chunk_type.untold": (() => {
      const b = Buffer.from(good);
      const info = JSON.parse(untold("info", "--json", path.join(a.data, "minimal_v4.untold")))[0];
      // The chunk table follows the header: compression of chunk 0 set to 200 (no such method).
      const table = info.headerSize;
      b.writeUInt32LE(200, table + 4);
      return b;
    })(),
    "garbage.mdl": Buffer.concat([Buffer.from("UMDL"), Buffer.alloc(64, 0xff)]),
    "garbage.pmdl_b": Buffer.concat([Buffer.from("UDMB"), Buffer.alloc(64, 0xee)]),
  };
  for (const [name, bytes] of Object.entries(crafted)) fs.writeFileSync(path.join(site.gen, name), bytes);
  await withBrowser(site, async (page, base) => {
    await openViewer(page, base, "");
    for (const name of Object.keys(crafted)) {
      const expected = JSON.parse(untold("validate", "--deep", "--json", path.join(site.gen, name))).results[0];
      check(expected.valid === false, `${name}: untold validate accepts it (not hostile)`);
      await openUrl(page, "/gen/" + name);
      const shown = await page.evaluate(() => ({
        rule: (document.getElementById("rule-id") || {}).textContent,
        describe: (document.getElementById("error-describe") || {}).textContent,
        status: document.getElementById("status").className,
      }));
      check(shown.rule === expected.error.rule, `${name}: the page shows rule ${shown.rule}, untold validate says ${expected.error.rule}`);
      check(shown.describe === expected.error.describe, `${name}: the page says "${shown.describe}", untold "${expected.error.describe}"`);
      check(shown.status === "error", `${name}: the status line does not report the error`);
      console.log(`hostile: ${name}: ${shown.rule}`);
      await checkStillWorks(page, name);
    }
    // meshopt chunks (compression 3/4): valid, but the viewer has no meshopt
    // decoder; it shows the library's compression_unsupported and keeps working.
    const obj = path.join(site.scratch, "city.obj");
    fs.writeFileSync(obj, cityObj());
    untold("cook", obj, "--compress", "meshopt", "-o", path.join(site.gen, "city_meshopt.untold"));
    const info = JSON.parse(untold("info", "--json", path.join(site.gen, "city_meshopt.untold")))[0];
    check(info.chunks.some((c) => c.compression === "meshopt"), "cook --compress meshopt wrote no meshopt chunk");
    const doc = await openUrl(page, "/gen/city_meshopt.untold");
    check(doc.validate.error && doc.validate.error.name === "compression_unsupported",
          "city_meshopt.untold: expected compression_unsupported, got " + JSON.stringify(doc.validate.error));
    const rule = await page.$eval("#rule-id", (e) => e.textContent);
    check(rule === "R-DECOMPRESS", "city_meshopt.untold: the page shows " + rule);
    console.log(`hostile: city_meshopt.untold (valid, meshopt chunks): ${rule} ${doc.validate.error && doc.validate.error.name}`);
    await checkStillWorks(page, "city_meshopt.untold");
  });
}

// ---- streaming -----------------------------------------------------------------------

// An OBJ city over 400 x 400 units: 12 x 12 blocks, each a box whose roof
// is a bumpy 24 x 24 grid, so that tiles are larger than the 64 KiB prefix
// (their geometry then comes in a second range request) and LODs simplify.
// Flat roofs (bumpy false) compress well: chunks over four times their size.
function cityObj(bumpy = true) {
  const lines = [];
  let v = 0;
  const n = 24;
  for (let i = 0; i < 12; ++i)
    for (let j = 0; j < 12; ++j) {
      const x = -200 + i * 33 + 5, z = -200 + j * 33 + 5, w = 20, hgt = 5 + ((i * 7 + j * 13) % 11) * 3;
      for (const [dx, dz] of [[0, 0], [w, 0], [w, w], [0, w]]) lines.push(`v ${x + dx} 0 ${z + dz}`);
      for (let r = 0; r <= n; ++r)
        for (let c = 0; c <= n; ++c) {
          const bump = !bumpy || r === 0 || c === 0 || r === n || c === n ? 0 : Math.sin(r * 1.3 + i) * Math.cos(c * 0.7 + j) * 1.5;
          lines.push(`v ${x + (w * c) / n} ${hgt + bump} ${z + (w * r) / n}`);
        }
      const g = (r, c) => v + 5 + r * (n + 1) + c;
      for (let r = 0; r < n; ++r)
        for (let c = 0; c < n; ++c) lines.push(`f ${g(r, c)} ${g(r + 1, c)} ${g(r + 1, c + 1)} ${g(r, c + 1)}`);
      // Walls from the ground corners to the roof's corners.
      const roof = [g(0, 0), g(0, n), g(n, n), g(n, 0)];
      for (let k = 0; k < 4; ++k) lines.push(`f ${v + 1 + k} ${v + 1 + ((k + 1) % 4)} ${roof[(k + 1) % 4]} ${roof[k]}`);
      v += 4 + (n + 1) * (n + 1);
    }
  return lines.join("\n") + "\n";
}

async function streaming() {
  const site = makeSite();
  const obj = path.join(site.scratch, "city.obj");
  fs.writeFileSync(obj, cityObj());
  const world = path.join(site.gen, "world");
  untold("cook", obj, "--tiles", "grid:100", "-o", world);
  const manifest = path.join(world, "manifest.json");
  // The camera path: across the city and back out, 10 m above the ground.
  const keys = [[0, -260, 10, 0], [30, 260, 10, 0], [40, 260, 10, 260]];
  const csv = path.join(site.scratch, "camera.csv");
  fs.writeFileSync(csv, "t,x,y,z\n" + keys.map((k) => k.join(",")).join("\n") + "\n");
  const tick = 0.1;
  const cameraAt = (t) => {  // stream_sim.cpp camera_at
    if (t <= keys[0][0]) return keys[0].slice(1);
    if (t >= keys[keys.length - 1][0]) return keys[keys.length - 1].slice(1);
    let k = 1;
    while (keys[k][0] <= t) ++k;
    const A = keys[k - 1], B = keys[k], f = B[0] > A[0] ? (t - A[0]) / (B[0] - A[0]) : 0;
    return [A[1] + f * (B[1] - A[1]), A[2] + f * (B[2] - A[2]), A[3] + f * (B[3] - A[3])];
  };
  await withBrowser(site, async (page, base, nginx) => {
    await openViewer(page, base, "");
    // Without a budget, then with one that forces evictions (every level
    // declares its size in the manifest, so the planner's estimates are the
    // sizes the page learns: both runs see the same numbers).
    for (const budgetMiB of [0, 3]) {
      const label = budgetMiB ? `budget ${budgetMiB} MiB` : "no budget";
      const sim = JSON.parse(untold("stream-sim", manifest, "--path", csv, "--json", "--tick", String(tick),
                                    "--bandwidth", "100000", "--latency", "0", ...(budgetMiB ? ["--budget-mb", String(budgetMiB)] : [])));
      check(sim.ok === true, "stream-sim failed");
      await page.$eval("#budget", (e, v) => { e.value = String(v); }, budgetMiB);
      const opened = await page.evaluate((u) => window.untoldViewer.startStreaming(u, { manual: true }), "/gen/world/manifest.json");
      check(!opened.error && opened.tiles.length >= 4, "the manifest does not open: " + JSON.stringify(opened).slice(0, 300));
      const ticks = Math.ceil((keys[keys.length - 1][0] - keys[0][0]) / tick) + 1;
      let peak = 0;
      for (let i = 0; i < ticks; ++i) {
        const now = keys[0][0] + i * tick;
        const r = await page.evaluate((c, t) => window.untoldViewer.streamStep(c, t), cameraAt(now), now);
        peak = Math.max(peak, r.resident);
      }
      const got = await page.evaluate(() => {
        const st = window.untoldViewer.stream;
        return { events: st.events, bytes: st.bytes, requests: st.requests, shown: st.shown,
                 drawn: st.shown.filter((k) => (st.drawn.get(k) || []).length > 0) };
      });
      // Every level shown at the end was parsed by the library and is drawn.
      check(got.shown.length > 0 && got.drawn.length === got.shown.length,
            `${label}: shown levels ${got.shown.join(" ")} but drawn ${got.drawn.join(" ")}`);
      const key = (e) => `${Math.round(e.t * 10) / 10} ${e.event} ${e.tile} ${e.level}`;
      const predicted = sim.events.map(key), seen = got.events.map(key);
      const kinds = (list, what) => list.filter((e) => e.split(" ")[1] === what).length;
      console.log(`streaming (${label}): ${opened.tiles.length} tiles; stream-sim predicts ${predicted.length} events ` +
                  `(${kinds(predicted, "fetch")} fetches, ${kinds(predicted, "unload")} unloads, ${sim.evictions} evictions, ` +
                  `peak ${sim.memory.peak} bytes); the page had ${seen.length} (peak ${peak}); ` +
                  `${got.requests} HTTP requests, ${got.bytes} bytes`);
      check(kinds(predicted, "unload") > 0 && (budgetMiB || kinds(predicted, "fetch") > opened.tiles.length),
            `${label}: the path should fetch LOD/HLOD levels and unload some`);
      if (budgetMiB) {
        check(sim.evictions > 0, `${label}: the budget should force evictions`);
        check(peak <= budgetMiB * 1048576, `${label}: resident ${peak} over the budget`);
      }
      check(peak === sim.memory.peak, `${label}: peak resident ${peak}, stream-sim says ${sim.memory.peak}`);
      try {
        assert.deepStrictEqual(seen, predicted);
      } catch (e) {
        check(false, `${label}: the page's fetch/unload/show events differ from untold stream-sim's:\n` + e.message.slice(0, 3000));
      }
      if (!budgetMiB && a.screenshot) {
        fs.mkdirSync(path.dirname(a.screenshot), { recursive: true });
        await page.screenshot({ path: a.screenshot });
        console.log("screenshot: " + a.screenshot);
      }
      const panel = await page.$eval("#stream-summary", (t) => t.textContent);
      check(panel.includes("bytes fetched") && panel.includes(String(got.bytes)), "the panel does not show the bytes fetched");
    }
    // The tiles came over Range requests: the access log has the prefix and geometry ranges.
    const log = fs.readFileSync(nginx.log, "utf8");
    check(/GET \/gen\/world\/\S+ 206 \d+ "bytes=0-65535"/.test(log), "no Range request for a tile prefix in nginx's log");
    check(/GET \/gen\/world\/\S+ 206 \d+ "bytes=65536-\d*"/.test(log), "no Range request for a tile's geometry after its prefix");
  });
}

(async () => {
  const cases = { samples, hostile, streaming };
  if (!cases[which]) throw new Error("unknown case " + which + " (samples | hostile | streaming)");
  await cases[which]();
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log("ok");
})().catch((e) => {
  console.log("FAIL: " + (e && e.stack || e));
  process.exit(1);
});
