// tests/web/harness.js - what the browser tests share: the prerequisites
// (a skip, exit code 77, with the reason when one is missing), a private
// nginx on a free loopback port (Range requests, as a CDN serves tiles;
// started as tests/remote/harness.hpp starts its own), headless chromium
// driven by puppeteer-core, and `untold` for the expected documents.
"use strict";
const fs = require("fs");
const path = require("path");
const net = require("net");
const { spawn, execFileSync } = require("child_process");

const SKIP = 77;

function skip(why) {
  console.log("skipped: " + why);
  process.exit(SKIP);
}

function which(name) {
  for (const dir of (process.env.PATH || "").split(":")) {
    const p = path.join(dir, name);
    try { fs.accessSync(p, fs.constants.X_OK); return p; } catch (e) { /* next */ }
  }
  return null;
}

// --key value arguments.
function args() {
  const a = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i + 1 < argv.length; i += 2) a[argv[i].replace(/^--/, "")] = argv[i + 1];
  return a;
}

// Everything the tests need, or a skip naming what is missing.
function prerequisites(a) {
  const chromium = process.env.CHROMIUM || which("chromium") || which("chromium-browser");
  if (!chromium) skip("chromium is not installed (scripts/install-deps.sh installs it)");
  if (!which("em++")) skip("emscripten (em++) is not installed (scripts/install-deps.sh installs it)");
  const nginx = which("nginx") || (fs.existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : null);
  if (!nginx) skip("nginx is not installed");
  let puppeteer;
  try {
    puppeteer = require(path.resolve(a["node-modules"], "puppeteer-core"));
  } catch (e) {
    skip("puppeteer-core is not installed under " + a["node-modules"] + " (scripts/install-deps.sh)");
  }
  for (const f of ["index.html", "viewer.js", "untold.js", "untold.wasm", "fzstd.js"])
    if (!fs.existsSync(path.join(a.web, f))) skip("the web viewer is not built: " + path.join(a.web, f) + " is missing (scripts/build-web.sh)");
  if (!fs.existsSync(a.untold)) skip("untold is not built: " + a.untold);
  return { chromium, nginx, puppeteer };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
    s.on("error", reject);
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, "127.0.0.1", () => { c.destroy(); resolve(true); });
    c.on("error", () => resolve(false));
  });
}

// nginx serving `www` on 127.0.0.1 (foreground, one process); the access
// log records each request's Range header. stop() kills it.
async function startNginx(nginx, prefix, www) {
  fs.mkdirSync(path.join(prefix, "logs"), { recursive: true });
  fs.mkdirSync(path.join(prefix, "tmp"), { recursive: true });
  const port = await freePort();
  const t = (p) => path.join(prefix, p);
  const conf = `daemon off;
master_process off;
worker_processes 1;
pid ${t("logs/nginx.pid")};
error_log ${t("logs/error.log")} warn;
events { worker_connections 256; }
http {
  log_format t '$request_method $uri $status $body_bytes_sent "$http_range"';
  access_log ${t("logs/access.log")} t;
  client_body_temp_path ${t("tmp/body")};
  proxy_temp_path ${t("tmp/proxy")};
  fastcgi_temp_path ${t("tmp/fastcgi")};
  uwsgi_temp_path ${t("tmp/uwsgi")};
  scgi_temp_path ${t("tmp/scgi")};
  types { text/html html; text/javascript js; text/css css; application/wasm wasm; application/json json; image/png png; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port};
    root ${www};
  }
}
`;
  fs.writeFileSync(t("nginx.conf"), conf);
  const child = spawn(nginx, ["-p", prefix, "-c", t("nginx.conf"), "-e", t("logs/error.log")], { stdio: "ignore" });
  let exited = false;
  child.on("exit", () => { exited = true; });
  for (let i = 0; i < 100 && !exited; ++i) {
    if (await canConnect(port)) return { port, log: t("logs/access.log"), stop: () => child.kill("SIGKILL") };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error("nginx did not start: " + fs.readFileSync(t("logs/error.log"), "utf8"));
}

// `untold ARGS` -> stdout (exit codes 0 and 1, "invalid", are both answers).
function untold(bin, argv) {
  try {
    return execFileSync(bin, argv, { encoding: "utf8", maxBuffer: 256 << 20 });
  } catch (e) {
    if (e.status === 1) return e.stdout;
    throw e;
  }
}

async function launch(puppeteer, chromium) {
  return puppeteer.launch({
    executablePath: chromium,
    headless: true,
    defaultViewport: { width: 1400, height: 1000 },
    // WebGL2 without a GPU: ANGLE over SwiftShader.
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--window-size=1400,1000"],
  });
}

module.exports = { SKIP, skip, args, prerequisites, startNginx, untold, launch };
