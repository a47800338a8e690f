#version 450
#extension GL_GOOGLE_include_directive : require
// World-space positions and normals of a posed mesh (convert::pose).
#include "shaded_common.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 0) out vec3 v_normal;

void main() {
  gl_Position = pc.view_projection * vec4(in_position, 1.0);
  v_normal = in_normal;
}
