// The push constants of `untold render` (tools/render/render.cpp, struct
// draw_constants): one block per mesh.
layout(push_constant) uniform draw_constants {
  mat4 view_projection;  // world -> Vulkan clip space
  vec4 color;            // rgb: the material's display colour
  vec4 light;            // xyz: unit direction towards the headlight; w: ambient share
} pc;
