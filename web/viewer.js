// web/viewer.js - the viewer page: loads files into the WebAssembly module
// (untold.js, web/untold_web.cpp), draws the posed model with WebGL2, shows
// the tool's documents as tables, and drives the streaming planner over
// HTTP range requests. No server-side code: any static file server works
// (docs/web.md). window.untoldViewer is the page's API (the browser tests
// in tests/web/ use it).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const BACKGROUND = [32 / 255, 34 / 255, 40 / 255];
  const PREFIX_BYTES = 65536;  // untold::stream_options::initial_read: the first range request
  const COMPANIONS = /\.(ani|hmat|hman|hanim)$/i;

  const viewer = {
    ready: false,
    moduleLoadMs: 0,
    doc: null,          // the documents of the open file (untold_web_open)
    posed: null,        // the last pose summary
    lastLoadMs: 0,
    stream: null,
  };
  window.untoldViewer = viewer;

  function setStatus(text, kind) {
    const s = $("status");
    s.textContent = text;
    s.className = kind || "";
  }

  // ---- the module ---------------------------------------------------------------------

  let mod = null, api = null;
  async function startModule() {
    const t0 = performance.now();
    mod = await createUntold({ locateFile: (p) => p });
    viewer.moduleLoadMs = performance.now() - t0;
    const wrap = (name, ret, args) => mod.cwrap(name, ret, args);
    api = {
      open: wrap("untold_web_open", "string", ["string", "string", "string"]),
      pose: wrap("untold_web_pose", "string", ["number", "number", "number"]),
      positions: wrap("untold_web_positions", "number", ["number"]),
      normals: wrap("untold_web_normals", "number", ["number"]),
      indices: wrap("untold_web_indices", "number", ["number"]),
      tile: wrap("untold_web_tile", "string", ["string"]),
      streamOpen: wrap("untold_web_stream_open", "string", ["string", "number"]),
      streamTick: wrap("untold_web_stream_tick", "string", ["number", "number", "number", "number", "number", "string"]),
    };
    for (const dir of ["/in", "/tiles"]) mod.FS.mkdir(dir);  // a new module's file system is empty
  }

  // A call into the module. An abort (a bug, never a file's fault: the
  // library reports errors as values) loses the module: start a new one so
  // the page keeps working, and report it.
  async function call(fn, ...args) {
    try {
      return JSON.parse(api[fn](...args));
    } catch (e) {
      await startModule();
      return { error: { rule: "E-ABORT", describe: "the module aborted (" + e + "); it was restarted" } };
    }
  }

  // ---- files --------------------------------------------------------------------------

  // files: [{name, bytes: Uint8Array}]. The model is the first file that is
  // not a companion (clips, material tables, manifests); all are written
  // next to each other so the importers find their siblings.
  async function openFiles(files) {
    const t0 = performance.now();
    for (const f of mod.FS.readdir("/in")) if (f !== "." && f !== "..") mod.FS.unlink("/in/" + f);
    for (const f of files) mod.FS.writeFile("/in/" + f.name, f.bytes);
    const main = files.find((f) => !COMPANIONS.test(f.name)) || files[0];
    const clips = files.filter((f) => f !== main && /\.ani$/i.test(f.name)).map((f) => "/in/" + f.name);
    const doc = await call("open", "/in/" + main.name, main.name, clips.join("\n"));
    viewer.doc = doc;
    showDocuments(doc);
    await setupScene(doc);
    viewer.lastLoadMs = performance.now() - t0;
    const problem = doc.error || (doc.validate && doc.validate.valid === false && doc.validate.error);
    setStatus(main.name + (problem ? ": " + problem.describe : ": valid") +
              (doc.sceneError && !problem ? " (nothing to draw: " + doc.sceneError.describe + ")" : ""),
              problem ? "error" : "ok");
    return doc;
  }

  async function fetchBytes(url, optional) {
    const r = await fetch(url);
    if (!r.ok) {
      if (optional) return null;
      throw new Error(url + ": HTTP " + r.status);
    }
    return new Uint8Array(await r.arrayBuffer());
  }

  // A URL, with the companions a format reads from beside it (assetc's
  // .hmat/.hman/.hanim, tried and skipped when absent) and `clips` (.ani URLs).
  async function openUrl(url, clips) {
    setStatus("fetching " + url);
    try {
      const name = (u) => decodeURIComponent(new URL(u, location.href).pathname.split("/").pop() || "file");
      const files = [{ name: name(url), bytes: await fetchBytes(url) }];
      if (/\.hmesh$/i.test(url))
        for (const ext of [".hmat", ".hman", ".hanim"]) {
          const sibling = url.replace(/\.hmesh$/i, ext);
          const bytes = await fetchBytes(sibling, true);
          if (bytes) files.push({ name: name(sibling), bytes });
        }
      for (const c of clips || []) files.push({ name: name(c), bytes: await fetchBytes(c) });
      return await openFiles(files);
    } catch (e) {
      setStatus(String(e), "error");
      return { error: { rule: "E-IO", describe: String(e) } };
    }
  }
  viewer.openUrl = openUrl;
  viewer.openBytes = (name, bytes) => openFiles([{ name, bytes: new Uint8Array(bytes) }]);

  // ---- tables -------------------------------------------------------------------------

  const isScalar = (v) => v === null || typeof v !== "object";
  const cellText = (v) => isScalar(v) ? String(v) :
    Array.isArray(v) && v.every(isScalar) ? v.join(", ") : JSON.stringify(v);

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  }

  // Header: every scalar member of a document (nested objects flattened as "a.b").
  function keyValueTable(id, object) {
    const t = el("table", { id });
    const add = (prefix, o) => {
      for (const [k, v] of Object.entries(o)) {
        const key = prefix + k;
        if (v !== null && typeof v === "object" && !Array.isArray(v) && k !== "error") add(key + ".", v);
        else if (!Array.isArray(v) || v.every(isScalar))
          t.append(el("tr", { "data-key": key }, el("th", {}, key), el("td", {}, cellText(v))));
      }
    };
    add("", object);
    return t;
  }

  function rowsTable(id, rows) {
    const columns = [];
    for (const r of rows) for (const [k, v] of Object.entries(r))
      if (!columns.includes(k) && (isScalar(v) || (Array.isArray(v) && v.every(isScalar)) || typeof v === "object")) columns.push(k);
    const t = el("table", { id, "data-rows": rows.length });
    t.append(el("tr", {}, ...columns.map((c) => el("th", {}, c))));
    for (const r of rows) t.append(el("tr", {}, ...columns.map((c) => el("td", { "data-column": c }, c in r ? cellText(r[c]) : ""))));
    return t;
  }

  // Entities as a tree, by parentEntityId (.untold dump).
  function entityTree(entities) {
    const children = new Map();
    for (const e of entities) {
      const p = e.parentEntityId === null ? "root" : e.parentEntityId;
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(e);
    }
    const seen = new Set();
    const list = (parent, depth) => {
      const ul = el("ul", { class: "tree" });
      for (const e of children.get(parent) || []) {
        if (seen.has(e.entityId) || depth > 64) continue;  // a file may lie about its tree
        seen.add(e.entityId);
        const li = el("li", { "data-entity": e.entityId },
          `${e.name} (id ${e.entityId}, ${e.meshRecordCount} mesh${e.meshRecordCount === 1 ? "" : "es"})`);
        if (children.has(e.entityId)) li.append(list(e.entityId, depth + 1));
        ul.append(li);
      }
      return ul;
    };
    return list("root", 0);
  }

  function validationBlock(doc) {
    const v = doc.validate || doc;
    const box = el("div", { id: "validation-result" });
    const error = doc.error || (v && v.error) || (doc.info && doc.info.error);
    if (!error) {
      box.append(el("p", { class: "valid" }, "valid (deep validation: every rule of the format)"));
      return box;
    }
    box.append(el("p", { class: "invalid" }, "invalid: ", el("span", { class: "rule", id: "rule-id" }, error.rule || "?"),
                  " " + (error.name || "")));
    box.append(el("p", { id: "error-describe" }, error.describe || error.message || ""));
    if (error.context && Object.keys(error.context).length) box.append(keyValueTable("error-context", error.context));
    return box;
  }

  function showDocuments(doc) {
    const v = $("validation"), d = $("documents");
    v.replaceChildren(el("h2", {}, "Validation"), validationBlock(doc));
    d.replaceChildren();
    const info = doc.info, dump = doc.dump;
    if (info) {
      d.append(el("h2", {}, "Header (" + (doc.format || "unrecognised") + ")"), keyValueTable("table-header", info));
      // Every list of records, at any depth ("model.subMeshes"), as a table.
      const lists = (prefix, o) => {
        for (const [k, val] of Object.entries(o)) {
          const key = prefix + k;
          if (Array.isArray(val) && val.length && val.every((x) => x && typeof x === "object" && !Array.isArray(x)))
            d.append(el("h2", {}, key === "chunks" ? "Chunks (compression and ratio)" : key), rowsTable("table-" + key, val));
          else if (val && typeof val === "object" && !Array.isArray(val) && k !== "error") lists(key + ".", val);
        }
      };
      lists("", info);
    }
    if (dump && dump.valid !== false) {
      if (Array.isArray(dump.entities) && dump.format === "untold")
        d.append(el("h2", {}, "Entities"), entityTree(dump.entities));
      for (const [k, val] of Object.entries(dump)) {
        if (info && Array.isArray(info[k])) continue;  // shown above
        if (Array.isArray(val) && val.length && val.every((x) => x && typeof x === "object") && k !== "entities" || (k === "entities" && dump.format !== "untold"))
          d.append(el("h2", {}, k), rowsTable("table-" + k, val));
      }
    }
    const raw = el("details", {}, el("summary", {}, "JSON (untold info / validate --deep / dump --json)"),
                   el("pre", { id: "raw-json" }, JSON.stringify({ info, validate: doc.validate, dump }, null, 2)));
    d.append(raw);
  }

  // ---- WebGL2 -------------------------------------------------------------------------

  const canvas = $("canvas");
  const gl = canvas.getContext("webgl2", { preserveDrawingBuffer: true, antialias: false });
  const VS = `#version 300 es
    in vec3 position; in vec3 normal;
    uniform mat4 mvp; out vec3 vNormal;
    void main() { vNormal = normal; gl_Position = mvp * vec4(position, 1.0); }`;
  const FS = `#version 300 es
    precision mediump float;
    in vec3 vNormal; uniform vec3 color; uniform vec3 light; uniform int lit; out vec4 outColor;
    void main() {
      float d = lit == 1 ? 0.35 + 0.65 * abs(dot(normalize(vNormal), light)) : 1.0;
      outColor = vec4(color * d, 1.0);
    }`;
  function compile(type, src) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  }
  const program = gl.createProgram();
  gl.attachShader(program, compile(gl.VERTEX_SHADER, VS));
  gl.attachShader(program, compile(gl.FRAGMENT_SHADER, FS));
  gl.bindAttribLocation(program, 0, "position");
  gl.bindAttribLocation(program, 1, "normal");
  gl.linkProgram(program);
  const U = {};
  for (const n of ["mvp", "color", "light", "lit"]) U[n] = gl.getUniformLocation(program, n);

  // A drawable: a VAO of positions (+ normals) and indices.
  function drawable(positions, normals, indices, mode) {
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const buffers = [];
    const attrib = (loc, data) => {
      const b = gl.createBuffer();
      buffers.push(b);
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, 3, gl.FLOAT, false, 0, 0);
    };
    attrib(0, positions);
    if (normals) attrib(1, normals);
    else { gl.disableVertexAttribArray(1); gl.vertexAttrib3f(1, 0, 0, 1); }
    let count = positions.length / 3;
    if (indices) {
      const b = gl.createBuffer();
      buffers.push(b);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, b);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, indices, gl.STATIC_DRAW);
      count = indices.length;
    }
    gl.bindVertexArray(null);
    return { vao, buffers, count, indexed: !!indices, mode };
  }
  function release(d) {
    gl.deleteVertexArray(d.vao);
    for (const b of d.buffers) gl.deleteBuffer(b);
  }

  let meshes = [];       // [{tri, wire, normals, color}]
  let boundsBox = null;  // lines of the posed bounds
  let extra = [];        // streaming: tile boxes [{lines, color}]

  function boxLines(min, max) {
    const p = [];
    const c = (i) => [i & 1 ? max[0] : min[0], i & 2 ? max[1] : min[1], i & 4 ? max[2] : min[2]];
    for (const [a, b] of [[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]])
      p.push(...c(a), ...c(b));
    return new Float32Array(p);
  }

  // Uploads the module's posed meshes (pointers into its heap, copied here).
  function uploadPose(summary) {
    releaseMeshes(meshes);
    meshes = [];
    if (boundsBox) release(boundsBox);
    boundsBox = null;
    if (!summary || summary.error) return;
    meshes = meshesOf(summary);
    if (summary.min) boundsBox = drawable(boxLines(summary.min, summary.max), null, null, gl.LINES);
  }

  // GL copies of the module's last posed meshes (pointers into its heap).
  function meshesOf(summary) {
    const out = [];
    const diag = summary.min ? Math.hypot(...summary.max.map((v, i) => v - summary.min[i])) : 1;
    summary.meshes.forEach((m, i) => {
      if (m.indices === 0) return;
      const pos = new Float32Array(mod.HEAPF32.buffer, api.positions(i), m.vertices * 3).slice();
      const nrm = new Float32Array(mod.HEAPF32.buffer, api.normals(i), m.vertices * 3).slice();
      const idx = new Uint32Array(mod.HEAPU32.buffer, api.indices(i), m.indices).slice();
      const edges = new Uint32Array(idx.length * 2);
      for (let t = 0; t + 2 < idx.length; t += 3)
        edges.set([idx[t], idx[t + 1], idx[t + 1], idx[t + 2], idx[t + 2], idx[t]], t * 2);
      const len = 0.02 * diag, seg = new Float32Array(m.vertices * 6);
      for (let v = 0; v < m.vertices; ++v)
        for (let k = 0; k < 3; ++k) {
          seg[v * 6 + k] = pos[v * 3 + k];
          seg[v * 6 + 3 + k] = pos[v * 3 + k] + len * nrm[v * 3 + k];
        }
      out.push({ tri: drawable(pos, nrm, idx, gl.TRIANGLES), wire: drawable(pos, null, edges, gl.LINES),
                 normals: drawable(seg, null, null, gl.LINES), color: m.color });
    });
    return out;
  }
  function releaseMeshes(list) {
    for (const m of list) { release(m.tri); release(m.wire); release(m.normals); }
  }

  // ---- camera -------------------------------------------------------------------------

  const cam = { yaw: 0.7, pitch: 0.45, distance: 5, target: [0, 0, 0], radius: 1 };
  function frame(min, max) {
    cam.target = min.map((v, i) => (v + max[i]) / 2);
    cam.radius = Math.max(1e-6, Math.hypot(...max.map((v, i) => v - min[i])) / 2);
    cam.distance = cam.radius / Math.sin(Math.PI / 8) * 1.25;
  }
  function matrices() {
    const aspect = canvas.width / canvas.height, f = 1 / Math.tan(Math.PI / 8);
    const near = Math.max(cam.distance - cam.radius * 4, cam.distance * 0.01), far = cam.distance + cam.radius * 4;
    const proj = [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) / (near - far), -1, 0, 0, 2 * far * near / (near - far), 0];
    const eye = [cam.target[0] + cam.distance * Math.cos(cam.pitch) * Math.sin(cam.yaw),
                 cam.target[1] + cam.distance * Math.sin(cam.pitch),
                 cam.target[2] + cam.distance * Math.cos(cam.pitch) * Math.cos(cam.yaw)];
    const z = norm(sub(eye, cam.target)), x = norm(cross([0, 1, 0], z)), y = cross(z, x);
    const view = [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
    return { mvp: mul(proj, view), eye, light: z };
  }
  const sub = (a, b) => a.map((v, i) => v - b[i]);
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => { const l = Math.hypot(...a) || 1; return a.map((v) => v / l); };
  function mul(a, b) {  // column-major 4x4
    const r = new Array(16).fill(0);
    for (let c = 0; c < 4; ++c) for (let row = 0; row < 4; ++row)
      for (let k = 0; k < 4; ++k) r[c * 4 + row] += a[k * 4 + row] * b[c * 4 + k];
    return r;
  }
  // The screen box (pixels, y down) of the posed bounds' corners under the current camera.
  viewer.projectedBounds = () => {
    const p = viewer.posed;
    if (!p || !p.min) return null;
    const { mvp } = matrices();
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < 8; ++i) {
      const v = [i & 1 ? p.max[0] : p.min[0], i & 2 ? p.max[1] : p.min[1], i & 4 ? p.max[2] : p.min[2], 1];
      const o = [0, 1, 2, 3].map((r) => mvp[r] * v[0] + mvp[4 + r] * v[1] + mvp[8 + r] * v[2] + mvp[12 + r] * v[3]);
      const sx = (o[0] / o[3] * 0.5 + 0.5) * canvas.width, sy = (0.5 - o[1] / o[3] * 0.5) * canvas.height;
      x0 = Math.min(x0, sx); x1 = Math.max(x1, sx); y0 = Math.min(y0, sy); y1 = Math.max(y1, sy);
    }
    return { x0, y0, x1, y1 };
  };

  // Non-background pixels of the canvas as drawn: their count and screen box (y down).
  viewer.pixelBox = () => {
    draw();
    const w = canvas.width, h = canvas.height, px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const bg = BACKGROUND.map((v) => Math.round(v * 255));
    let count = 0, x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (let y = 0; y < h; ++y)
      for (let x = 0; x < w; ++x) {
        const i = (y * w + x) * 4;
        if (Math.abs(px[i] - bg[0]) + Math.abs(px[i + 1] - bg[1]) + Math.abs(px[i + 2] - bg[2]) <= 6) continue;
        ++count;
        const sy = h - 1 - y;  // readPixels rows start at the bottom
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, sy); y1 = Math.max(y1, sy);
      }
    return { count, x0, y0, x1: x1 + 1, y1: y1 + 1, width: w, height: h };
  };
  viewer.setOverlays = (o) => {
    for (const [k, v] of Object.entries(o)) $("show-" + k).checked = v;
    draw();
  };

  function draw() {
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.clearColor(...BACKGROUND, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.useProgram(program);
    const { mvp, light } = matrices();
    gl.uniformMatrix4fv(U.mvp, false, mvp);
    gl.uniform3fv(U.light, light);
    const run = (d, color, lit) => {
      gl.uniform3fv(U.color, color);
      gl.uniform1i(U.lit, lit ? 1 : 0);
      gl.bindVertexArray(d.vao);
      if (d.indexed) gl.drawElements(d.mode, d.count, gl.UNSIGNED_INT, 0);
      else gl.drawArrays(d.mode, 0, d.count);
    };
    gl.enable(gl.POLYGON_OFFSET_FILL);
    gl.polygonOffset(1, 1);
    const all = meshes.concat(viewer.stream ? viewer.stream.shownMeshes() : []);
    for (const m of all) run(m.tri, m.color, true);
    gl.disable(gl.POLYGON_OFFSET_FILL);
    if ($("show-wireframe").checked) for (const m of all) run(m.wire, [0.08, 0.08, 0.1], false);
    if ($("show-normals").checked) for (const m of all) run(m.normals, [0.3, 0.9, 1.0], false);
    if ($("show-bounds").checked && boundsBox) run(boundsBox, [1.0, 0.85, 0.3], false);
    for (const e of extra) run(e.lines, e.color, false);
    gl.bindVertexArray(null);
  }

  // ---- scene, clips, LOD --------------------------------------------------------------

  const anim = { clip: -1, time: 0, playing: false, duration: 0, last: 0 };
  async function poseNow(reframe) {
    const summary = await call("pose", anim.clip, anim.time, Number($("lod").value || 0));
    viewer.posed = summary.error ? null : summary;
    if (summary.error) setStatus("pose: " + summary.error.describe, "error");
    uploadPose(summary);
    if (reframe && viewer.posed && viewer.posed.min) frame(viewer.posed.min, viewer.posed.max);
    $("time").textContent = anim.time.toFixed(2) + " s";
    if (anim.duration > 0) $("timeline").value = String(anim.time / anim.duration);
    draw();
    return summary;
  }
  viewer.pose = async (clip, time, lod) => {
    anim.clip = clip; anim.time = time;
    if (lod !== undefined) $("lod").value = String(lod);
    return poseNow(false);
  };

  async function setupScene(doc) {
    stopStreaming();
    anim.playing = false;
    anim.clip = -1;
    anim.time = 0;
    const clip = $("clip"), lod = $("lod");
    clip.replaceChildren(el("option", { value: "-1" }, "rest pose"));
    lod.replaceChildren(el("option", { value: "0" }, "0 (full)"));
    const s = doc.scene;
    if (s) {
      s.animations.forEach((a, i) => clip.append(el("option", { value: String(i) }, `${a.name || "clip " + i} (${a.duration.toFixed(2)} s)`)));
      for (let i = 1; i <= s.lods; ++i) lod.append(el("option", { value: String(i) }, String(i)));
      if (s.animations.length) { clip.value = "0"; anim.clip = 0; anim.duration = s.animations[0].duration; }
    }
    $("play").disabled = $("timeline").disabled = !(s && s.animations.length);
    $("play").textContent = "play";
    if (s) await poseNow(true);
    else { viewer.posed = null; uploadPose(null); draw(); }
  }

  function tickAnimation(now) {
    if (anim.playing && anim.duration > 0) {
      anim.time = (anim.time + (now - anim.last) / 1000) % anim.duration;
      poseNow(false);
    }
    anim.last = now;
    requestAnimationFrame(tickAnimation);
  }

  // ---- streaming ----------------------------------------------------------------------

  // The planner runs in the module; this executes its actions over HTTP:
  // fetch_prefix = Range bytes=0-65535, fetch_ranges = the rest of the file,
  // fetch_file = the whole file; load completes at once (the bytes are here).
  const STATE_COLOR = { unloaded: [0.35, 0.35, 0.4], fetching: [1, 0.85, 0.2], parsing: [1, 0.6, 0.2],
                        parsed: [0.3, 0.9, 0.4], unloading: [0.8, 0.4, 0.9], failed: [1, 0.2, 0.2] };

  async function startStreaming(manifestUrl, options) {
    stopStreaming();
    let text;
    try {
      const r = await fetch(manifestUrl);
      if (!r.ok) throw new Error("HTTP " + r.status);
      text = await r.text();
    } catch (e) {
      setStatus("manifest " + manifestUrl + ": " + e, "error");
      return { error: { rule: "E-IO", describe: String(e) } };
    }
    const world = await call("streamOpen", text, options && options.wholeFile ? 1 : 0);
    if (world.error) { setStatus("manifest: " + world.error.describe, "error"); return world; }
    const st = {
      url: new URL(manifestUrl, location.href), world, results: [], pending: new Map(), held: new Map(),
      bytes: 0, requests: 0, events: [], camera: [0, 0, 0], resident: 0, t0: performance.now(), timer: 0, last: null,
      drawn: new Map(),  // "tile/level" -> GL meshes of a loaded level
      shown: [],         // "tile/level" of each tile's shown level
      shownMeshes() { return this.shown.flatMap((k) => this.drawn.get(k) || []); },
    };
    viewer.stream = st;
    let min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
    for (const t of world.tiles) { min = min.map((v, i) => Math.min(v, t.min[i])); max = max.map((v, i) => Math.max(v, t.max[i])); }
    st.camera = world.tiles.length ? world.tiles[0].center.slice() : [0, 0, 0];
    releaseMeshes(meshes);
    meshes = [];
    viewer.posed = { min, max };
    uploadPose(null);
    frame(min, max);
    cam.pitch = 1.2;
    $("stream-panel").hidden = false;
    if (!options || !options.manual) st.timer = setInterval(() => streamStep(st.camera, (performance.now() - st.t0) / 1000, false), 100);
    setStatus("streaming " + manifestUrl, "ok");
    return world;
  }
  function stopStreaming() {
    const st = viewer.stream;
    if (!st) return;
    clearInterval(st.timer);
    for (const p of st.pending.values()) p.controller.abort();
    viewer.stream = null;
    for (const list of st.drawn.values()) releaseMeshes(list);
    for (const e of extra) release(e.lines);
    extra = [];
    $("stream-panel").hidden = true;
  }

  function levelName(t, level) {
    if (level === null) return "none";
    if (level === 0) return "full";
    return level === viewer.stream.world.tiles[t].hlodLevel ? "hlod" : "lod" + level;
  }

  async function rangeFetch(st, request, url, range) {
    const controller = new AbortController();
    const job = { controller, done: null };
    st.pending.set(request, job);
    job.done = (async () => {
      try {
        const r = await fetch(url, { headers: range ? { Range: range } : {}, signal: controller.signal });
        if (!(r.ok || r.status === 206)) throw new Error("HTTP " + r.status);
        const body = new Uint8Array(await r.arrayBuffer());
        st.bytes += body.length;
        st.requests += 1;
        const total = Number(((r.headers.get("Content-Range") || "").split("/")[1]) || body.length);
        st.results.push([request, "completed", total]);
        return { body, total };
      } catch (e) {
        st.results.push([request, controller.signal.aborted ? "cancelled" : "failed", 0]);
        return null;
      } finally {
        st.pending.delete(request);
      }
    })();
    return job.done;
  }

  // Parses a fetched level with the library (untold_web_tile: full checks,
  // rest pose) and keeps its GL meshes. False when it is refused.
  async function loadLevel(st, key) {
    const held = st.held.get(key);
    if (!held) return false;
    const file = "/tiles/" + key.replace("/", "_") + ".untold";
    mod.FS.writeFile(file, held.body);
    const summary = await call("tile", file);
    try { mod.FS.unlink(file); } catch (e) { /* a restarted module has none */ }
    if (summary.error) {
      setStatus("tile " + key + ": " + summary.error.describe, "error");
      return false;
    }
    releaseMeshes(st.drawn.get(key) || []);
    st.drawn.set(key, meshesOf(summary));
    return true;
  }

  // One planner tick at `now` (seconds) with the camera at `camera`; wait:
  // finish every request it starts before returning (the tests' stepping).
  async function streamStep(camera, now, wait) {
    const st = viewer.stream;
    if (!st) return null;
    st.camera = camera.slice();
    const budgetMiB = Number($("budget").value) || 0;
    const results = st.results.splice(0);
    const r = await call("streamTick", camera[0], camera[1], camera[2], now, budgetMiB * 1048576, JSON.stringify(results));
    if (r.error) { setStatus("stream: " + r.error.describe, "error"); return r; }
    const started = [];
    for (const a of r.actions) {
      const tile = st.world.tiles[a.tile];
      const url = a.level === null ? null : new URL(tile.paths[a.level], st.url).href;
      const key = a.tile + "/" + a.level;
      switch (a.kind) {
        case "fetch_prefix":
          st.events.push({ t: now, event: "fetch", tile: tile.id, level: a.level });
          started.push(rangeFetch(st, a.request, url, "bytes=0-" + (PREFIX_BYTES - 1)).then((got) => {
            if (got) st.held.set(key, got);
          }));
          break;
        case "fetch_ranges": {
          const held = st.held.get(key);
          if (held && held.total <= held.body.length) st.results.push([a.request, "completed", held.total]);
          else started.push(rangeFetch(st, a.request, url, "bytes=" + (held ? held.body.length : 0) + "-").then((got) => {
            const prefix = st.held.get(key);
            if (!got || !prefix) return;
            const whole = new Uint8Array(prefix.body.length + got.body.length);
            whole.set(prefix.body);
            whole.set(got.body, prefix.body.length);
            st.held.set(key, { body: whole, total: got.total });
          }));
          break;
        }
        case "fetch_file":
          st.events.push({ t: now, event: "fetch", tile: tile.id, level: a.level });
          started.push(rangeFetch(st, a.request, url, null).then((got) => { if (got) st.held.set(key, got); }));
          break;
        case "load":
          st.results.push([a.request, (await loadLevel(st, key)) ? "completed" : "failed", 0]);
          break;
        case "cancel": {
          st.events.push({ t: now, event: "cancel", tile: tile.id, level: a.level });
          const job = st.pending.get(a.request);
          if (job) job.controller.abort();
          else st.results.push([a.request, "cancelled", 0]);
          break;
        }
        case "unload":
          st.events.push({ t: now, event: "unload", tile: tile.id, level: a.level });
          st.held.delete(key);
          releaseMeshes(st.drawn.get(key) || []);
          st.drawn.delete(key);
          break;
        case "show":
          st.events.push({ t: now, event: "show " + levelName(a.tile, a.level), tile: tile.id, level: a.level });
          break;
      }
    }
    if (wait) await Promise.all(started);
    st.last = r;
    st.resident = r.resident;
    showStreaming(st, r);
    return r;
  }
  viewer.startStreaming = startStreaming;
  viewer.streamStep = (camera, now) => streamStep(camera, now, true);

  function showStreaming(st, r) {
    const budget = Number($("budget").value) || 0;
    const sum = $("stream-summary");
    sum.replaceChildren(...[
      ["bytes fetched", st.bytes], ["requests", st.requests], ["resident (planner)", r.resident],
      ["memory budget", budget > 0 ? Math.round(budget * 1048576) : "none"], ["in flight", r.inFlight],
      ["camera", st.camera.map((v) => v.toFixed(1)).join(", ")],
    ].map(([k, v]) => el("tr", { "data-key": k }, el("th", {}, k), el("td", {}, String(v)))));
    st.shown = r.tiles.map((t, i) => t.shown === null ? null : i + "/" + t.shown).filter((k) => k !== null);
    const tiles = $("stream-tiles");
    tiles.replaceChildren(el("tr", {}, el("th", {}, "tile"), el("th", {}, "distance"), el("th", {}, "shown"), el("th", {}, "levels")));
    r.tiles.forEach((t, i) => tiles.append(el("tr", { "data-tile": st.world.tiles[i].id },
      el("td", {}, st.world.tiles[i].id), el("td", {}, t.distance.toFixed(1)), el("td", {}, levelName(i, t.shown)),
      el("td", {}, t.levels.map((l, k) => levelName(i, k) + ": " + l.state).join(", ")))));
    // The map: each tile's box coloured by its full level's state, the camera as a cross.
    for (const e of extra) release(e.lines);
    extra = r.tiles.map((t, i) => {
      const d = st.world.tiles[i];
      // Shown: green for the full tile, cyan for a LOD, blue for the HLOD; else the busiest state.
      const color = t.shown === 0 ? STATE_COLOR.parsed : t.shown === d.hlodLevel ? [0.3, 0.5, 1] : t.shown !== null ? [0.3, 0.9, 0.9]
        : STATE_COLOR[t.levels.some((l) => l.state === "fetching") ? "fetching" : t.levels[0].state] || [1, 1, 1];
      return { lines: drawable(boxLines(d.min, d.max), null, null, gl.LINES), color };
    });
    const c = st.camera, s = cam.radius * 0.05;
    extra.push({ lines: drawable(new Float32Array([c[0] - s, c[1], c[2], c[0] + s, c[1], c[2], c[0], c[1], c[2] - s, c[0], c[1], c[2] + s,
                                                   c[0], c[1] - s, c[2], c[0], c[1] + s, c[2]]), null, null, gl.LINES), color: [1, 1, 1] });
    draw();
  }

  // ---- input --------------------------------------------------------------------------

  function wireInput() {
    $("file-input").addEventListener("change", async (e) => {
      const files = await Promise.all([...e.target.files].map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
      if (files.length) openFiles(files);
    });
    document.addEventListener("dragover", (e) => { e.preventDefault(); document.body.classList.add("dragging"); });
    document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
    document.addEventListener("drop", async (e) => {
      e.preventDefault();
      document.body.classList.remove("dragging");
      const files = await Promise.all([...e.dataTransfer.files].map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
      if (files.length) openFiles(files);
    });
    $("url-load").addEventListener("click", () => openUrl($("url-input").value.trim()));
    $("stream-start").addEventListener("click", () => startStreaming($("manifest-input").value.trim()));
    for (const id of ["show-wireframe", "show-normals", "show-bounds"]) $(id).addEventListener("change", draw);
    $("lod").addEventListener("change", () => poseNow(false));
    $("clip").addEventListener("change", () => {
      anim.clip = Number($("clip").value);
      const a = viewer.doc && viewer.doc.scene && viewer.doc.scene.animations[anim.clip];
      anim.duration = a ? a.duration : 0;
      anim.time = 0;
      poseNow(false);
    });
    $("play").addEventListener("click", () => {
      anim.playing = !anim.playing;
      $("play").textContent = anim.playing ? "pause" : "play";
    });
    $("timeline").addEventListener("input", () => {
      anim.playing = false;
      $("play").textContent = "play";
      anim.time = Number($("timeline").value) * anim.duration;
      poseNow(false);
    });
    let drag = null;
    canvas.addEventListener("mousedown", (e) => { drag = [e.clientX, e.clientY]; });
    window.addEventListener("mouseup", () => { drag = null; });
    window.addEventListener("mousemove", (e) => {
      if (!drag) return;
      cam.yaw -= (e.clientX - drag[0]) * 0.01;
      cam.pitch = Math.max(-1.55, Math.min(1.55, cam.pitch + (e.clientY - drag[1]) * 0.01));
      drag = [e.clientX, e.clientY];
      draw();
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      cam.distance *= Math.exp(e.deltaY * 0.001);
      draw();
    }, { passive: false });
    window.addEventListener("keydown", (e) => {
      const st = viewer.stream;
      if (!st || e.target.tagName === "INPUT") return;
      const step = cam.radius * 0.02;
      const move = { w: [0, 0, -1], arrowup: [0, 0, -1], s: [0, 0, 1], arrowdown: [0, 0, 1], a: [-1, 0, 0], arrowleft: [-1, 0, 0],
                     d: [1, 0, 0], arrowright: [1, 0, 0], q: [0, -1, 0], e: [0, 1, 0] }[e.key.toLowerCase()];
      if (move) st.camera = st.camera.map((v, i) => v + move[i] * step);
    });
  }

  // ---- start --------------------------------------------------------------------------

  (async () => {
    await startModule();
    wireInput();
    requestAnimationFrame(tickAnimation);
    draw();
    viewer.ready = true;
    setStatus("ready: drop a file or give a URL", "ok");
    const q = new URLSearchParams(location.search);
    if (q.get("file")) await openUrl(q.get("file"), q.getAll("anim"));
    if (q.get("manifest")) await startStreaming(q.get("manifest"));
  })();
})();
