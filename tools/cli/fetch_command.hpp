// tools/fetch_command.hpp - `untold fetch URL`: download a .untold (or any
// file) over HTTPS through the persistent disk cache, validate it, and print
// what it holds (size, chunks, meshes, ETag, cache hit/miss). Needs the
// untold::remote target (libcurl); see docs/remote.md.
//
//   untold fetch https://cdn.example.com/scene/tiles/t_0_0.untold
//   untold fetch URL --revalidate            # conditional GET (ETag), 304 keeps the entry
//   untold fetch URL --ranges                # open by HTTP Range requests instead, print bytes fetched
//   untold fetch URL --cache-dir DIR --ca-file ca.pem --json
//
// Exit codes: 0 fetched and valid, 1 the file failed validation, 2 usage (a
// refused URL such as http://), 3 network or cache failure. --json prints a
// JSON document on failure too ({"url", "ok": false, "error"}).
#pragma once

namespace CLI {
class App;
}

namespace untold::tools {

/// Adds the `fetch` subcommand to `app`; when it runs, its exit code is
/// stored in `exit_code`.
void add_fetch_command(CLI::App& app, int& exit_code);

}  // namespace untold::tools
