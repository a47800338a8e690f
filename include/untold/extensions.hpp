// untold/extensions.hpp - the engine extension tables and plugin chunks:
// their records, views and plugin envelope (extension_records.hpp) and their
// rules and deep checks (extension_rules.hpp).
//
//   for (const untold::skin_record& s : a->table<untold::skin_record>()) {
//     auto joints  = untold::view_joint_indices(*a, s);   // 4 x u16 per vertex
//     auto weights = untold::view_joint_weights(*a, s);   // 4 x f32 per vertex
//   }
//   for (const untold::plugin_chunk_view& p : untold::plugin_chunks(*a))
//     if (p.plugin_id == "com.example.physics") load_shapes(p.kind, p.chunk_version, p.payload);
#pragma once

#include "extension_records.hpp"
#include "extension_rules.hpp"
