#version 450
// Writes the interpolated value unchanged (R32G32B32A32_SFLOAT target).
layout(location = 0) in vec4 v_value;
layout(location = 0) out vec4 out_value;

void main() {
  out_value = v_value;
}
