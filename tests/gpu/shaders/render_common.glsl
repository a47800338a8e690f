// What the render test's vertex shaders share (tests/gpu/test_render.cpp
// mirrors it on the CPU): an orthographic placement, and per draw a mode
// choosing which decoded attributes reach the colour target.
layout(push_constant) uniform draw_constants {
  vec4 placement;  // clip.xy = position.xy * placement.x + placement.yz
  int mode;        // 0 normal + Lambert, 1 tangent + handedness, 2 uv0 uv1, 3 color0
} pc;

layout(location = 0) out vec4 v_value;

const vec3 light_direction = vec3(0.3, -0.5, 0.8124038);  // unit length

vec4 place(vec3 p) {
  return vec4(p.xy * pc.placement.x + pc.placement.yz, 0.5 + 0.25 * p.z, 1.0);
}

vec4 shade(vec3 n, vec4 t, vec2 uv0, vec2 uv1, vec4 color0) {
  if (pc.mode == 0) return vec4(n * 0.5 + 0.5, max(dot(n, light_direction), 0.0));
  if (pc.mode == 1) return vec4(t.xyz * 0.5 + 0.5, t.w * 0.5 + 0.5);
  if (pc.mode == 2) return vec4(uv0, uv1);
  return color0;
}
