// tools/format_assetc.cpp - the assetc formats in the CLI: magic recognition,
// info/validate/dump as JSON, the importer for cook, and the family's own
// subcommands (see formats.hpp, docs/assetc.md).
#include "formats.hpp"

namespace untold::tools {

void add_assetc_formats(std::vector<format_handler>& /*out*/) {}

void add_assetc_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace untold::tools
