// tools/render/vulkan_offscreen.hpp - the one small Vulkan offscreen
// renderer of the project, shared by `untold render` (tools/render/render.cpp)
// and the GPU render tests (tests/gpu): one device, host-visible buffers, and
// "draw these meshes (vertex + index buffers, one pipeline, push constants
// per draw) into a W x H colour image, with or without a depth buffer, and
// read the pixels back". Vulkan 1.0 only (render pass, no dynamic
// rendering), so lavapipe (mesa-vulkan-drivers) and any real driver run it.
// Header-only: the test build uses it without the command-line tool.
#pragma once

#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace untold::vulkan {

/// One vertex binding's input: what a pipeline is built from.
struct vertex_input {
  std::uint32_t stride = 0;
  std::vector<VkVertexInputAttributeDescription> attributes;
};

/// The image a draw renders into.
struct target {
  std::uint32_t width = 128, height = 128;
  VkFormat color_format = VK_FORMAT_R32G32B32A32_SFLOAT;
  std::uint32_t bytes_per_pixel = 16;  // of color_format
  VkClearColorValue clear{};           // the colour before any draw
  /// A depth buffer (cleared to 1, LESS test): meshes occlude each other.
  bool depth = false;
  VkCullModeFlags cull = VK_CULL_MODE_BACK_BIT;  // counter-clockwise front faces
};

/// The shaders of a pipeline, and the size of the push-constant block both
/// stages see.
struct shaders {
  std::span<const std::uint32_t> vertex_spirv, fragment_spirv;
  std::uint32_t push_constant_bytes = 0;  // at most 128 (Vulkan's guaranteed minimum)
};

struct host_buffer;

/// One indexed draw: its buffers and its push constants.
struct draw_call {
  const host_buffer* vertices = nullptr;
  const host_buffer* indices = nullptr;
  VkIndexType index_type = VK_INDEX_TYPE_UINT32;
  std::uint32_t index_count = 0;
  std::span<const std::byte> push_constants;  // shaders::push_constant_bytes of them
  std::uint32_t first_index = 0;   // where the draw's indices start in `indices`
  std::int32_t vertex_offset = 0;  // added to each index
};

/// A host-visible, host-coherent buffer, mapped for its lifetime.
struct host_buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
  host_buffer() = default;
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;
  ~host_buffer() {
    if (memory != VK_NULL_HANDLE) vkFreeMemory(device, memory, nullptr);
    if (buffer != VK_NULL_HANDLE) vkDestroyBuffer(device, buffer, nullptr);
  }
};

class device {
 public:
  /// The first Vulkan device with a graphics queue, or nullptr with `why_not` set.
  static std::unique_ptr<device> create(std::string& why_not, const char* application = "untold") {
    auto d = std::unique_ptr<device>(new device);
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = application;
    app.apiVersion = VK_API_VERSION_1_0;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    if (VkResult r = vkCreateInstance(&ici, nullptr, &d->instance_); r != VK_SUCCESS) {
      d->instance_ = VK_NULL_HANDLE;
      why_not = "vkCreateInstance failed (" + std::to_string(r) + "): no Vulkan loader or driver";
      return nullptr;
    }
    std::uint32_t count = 0;
    vkEnumeratePhysicalDevices(d->instance_, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    if (count != 0) vkEnumeratePhysicalDevices(d->instance_, &count, physical.data());
    for (VkPhysicalDevice p : physical) {
      std::uint32_t families = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(p, &families, nullptr);
      std::vector<VkQueueFamilyProperties> props(families);
      vkGetPhysicalDeviceQueueFamilyProperties(p, &families, props.data());
      for (std::uint32_t f = 0; f < families; ++f) {
        if ((props[f].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) continue;
        d->physical_ = p;
        d->family_ = f;
        break;
      }
      if (d->physical_ != VK_NULL_HANDLE) break;
    }
    if (d->physical_ == VK_NULL_HANDLE) {
      why_not = "no Vulkan device with a graphics queue (install mesa-vulkan-drivers for lavapipe)";
      return nullptr;
    }
    keep_loaded_libraries();
    vkGetPhysicalDeviceProperties(d->physical_, &d->properties_);
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = d->family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (VkResult r = vkCreateDevice(d->physical_, &dci, nullptr, &d->device_); r != VK_SUCCESS) {
      d->device_ = VK_NULL_HANDLE;
      why_not = "vkCreateDevice failed (" + std::to_string(r) + ")";
      return nullptr;
    }
    vkGetDeviceQueue(d->device_, d->family_, 0, &d->queue_);
    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = d->family_;
    vkCreateCommandPool(d->device_, &pci, nullptr, &d->pool_);
    return d;
  }

  device(const device&) = delete;
  device& operator=(const device&) = delete;
  ~device() {
    if (device_ != VK_NULL_HANDLE) {
      vkDeviceWaitIdle(device_);
      if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, pool_, nullptr);
      vkDestroyDevice(device_, nullptr);
    }
    if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
  }

  [[nodiscard]] VkDevice handle() const noexcept { return device_; }
  [[nodiscard]] std::string name() const { return properties_.deviceName; }

  /// Whether `format` can be a vertex attribute on this device.
  [[nodiscard]] bool vertex_format_supported(VkFormat format) const {
    VkFormatProperties p{};
    vkGetPhysicalDeviceFormatProperties(physical_, format, &p);
    return (p.bufferFeatures & VK_FORMAT_FEATURE_VERTEX_BUFFER_BIT) != 0;
  }

  /// A mapped host-visible buffer of `size` bytes (zero-filled).
  [[nodiscard]] std::unique_ptr<host_buffer> make_buffer(VkDeviceSize size, VkBufferUsageFlags usage) const {
    auto b = std::make_unique<host_buffer>();
    b->device = device_;
    b->size = size;
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = usage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (vkCreateBuffer(device_, &bci, nullptr, &b->buffer) != VK_SUCCESS) return nullptr;
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, b->buffer, &req);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = memory_type(req.memoryTypeBits,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (mai.memoryTypeIndex == UINT32_MAX || vkAllocateMemory(device_, &mai, nullptr, &b->memory) != VK_SUCCESS)
      return nullptr;
    vkBindBufferMemory(device_, b->buffer, b->memory, 0);
    vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    std::memset(b->mapped, 0, static_cast<std::size_t>(size));
    return b;
  }

  /// Draws `calls` in order with one pipeline (`input`, `code`) into a
  /// cleared `t` and returns its pixels row by row, top row first
  /// (t.bytes_per_pixel each). Empty on failure (also when a size is 0 or
  /// the readback would not fit in memory).
  [[nodiscard]] std::vector<std::byte> draw(const target& t, const vertex_input& input, const shaders& code,
                                            std::span<const draw_call> calls) const {
    const VkDeviceSize image_bytes = VkDeviceSize{t.width} * t.height * t.bytes_per_pixel;
    if (t.width == 0 || t.height == 0 || code.push_constant_bytes > 128) return {};
    frame f(device_);
    if (!make_target(f, t) || !make_pipeline(f, t, input, code)) return {};
    auto readback = make_buffer(image_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    if (!readback) return {};

    VkCommandBufferAllocateInfo cai{};
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    if (vkAllocateCommandBuffers(device_, &cai, &cmd) != VK_SUCCESS) return {};
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &begin);
    VkClearValue clear[2]{};
    clear[0].color = t.clear;
    clear[1].depthStencil = {1.0f, 0};
    VkRenderPassBeginInfo rpb{};
    rpb.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
    rpb.renderPass = f.render_pass;
    rpb.framebuffer = f.framebuffer;
    rpb.renderArea.extent = {t.width, t.height};
    rpb.clearValueCount = t.depth ? 2 : 1;
    rpb.pClearValues = clear;
    vkCmdBeginRenderPass(cmd, &rpb, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, f.pipeline);
    for (const draw_call& c : calls) {
      if (c.index_count == 0) continue;
      const VkDeviceSize zero = 0;
      vkCmdBindVertexBuffers(cmd, 0, 1, &c.vertices->buffer, &zero);
      vkCmdBindIndexBuffer(cmd, c.indices->buffer, 0, c.index_type);
      if (code.push_constant_bytes != 0)
        vkCmdPushConstants(cmd, f.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                           code.push_constant_bytes, c.push_constants.data());
      vkCmdDrawIndexed(cmd, c.index_count, 1, c.first_index, c.vertex_offset, 0);
    }
    vkCmdEndRenderPass(cmd);  // the render pass leaves the image in TRANSFER_SRC_OPTIMAL
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {t.width, t.height, 1};
    vkCmdCopyImageToBuffer(cmd, f.color.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback->buffer, 1, &region);
    VkMemoryBarrier to_host{};
    to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr,
                         0, nullptr);
    vkEndCommandBuffer(cmd);
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    const bool ok = vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE) == VK_SUCCESS && vkQueueWaitIdle(queue_) == VK_SUCCESS;
    vkFreeCommandBuffers(device_, pool_, 1, &cmd);
    if (!ok) return {};
    std::vector<std::byte> pixels(static_cast<std::size_t>(image_bytes));
    std::memcpy(pixels.data(), readback->mapped, pixels.size());
    return pixels;
  }

 private:
  device() = default;

  /// Marks every shared library loaded so far (the Vulkan driver and what it
  /// pulled in) RTLD_NODELETE, so vkDestroyInstance does not unload the
  /// driver. Unloaded, the driver's globals vanish and LeakSanitizer reports
  /// the memory they still pointed to (lavapipe: 3 blocks, 240 bytes) as
  /// leaked; loaded, it is reachable and the sanitizer builds need no
  /// suppressions.
  static void keep_loaded_libraries() {
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void*) {
          if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
            if (void* h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(h);
          return 0;
        },
        nullptr);
  }

  /// An image with its memory and view, destroyed together.
  struct owned_image {
    VkDevice device;
    VkImage handle = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    explicit owned_image(VkDevice d) : device(d) {}
    owned_image(const owned_image&) = delete;
    owned_image& operator=(const owned_image&) = delete;
    ~owned_image() {
      vkDestroyImageView(device, view, nullptr);
      vkDestroyImage(device, handle, nullptr);
      vkFreeMemory(device, memory, nullptr);
    }
  };

  /// The objects of one draw, destroyed together.
  struct frame {
    VkDevice device;
    owned_image color, depth;
    VkRenderPass render_pass = VK_NULL_HANDLE;
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    explicit frame(VkDevice d) : device(d), color(d), depth(d) {}
    frame(const frame&) = delete;
    frame& operator=(const frame&) = delete;
    ~frame() {
      vkDestroyPipeline(device, pipeline, nullptr);
      vkDestroyPipelineLayout(device, layout, nullptr);
      vkDestroyFramebuffer(device, framebuffer, nullptr);
      vkDestroyRenderPass(device, render_pass, nullptr);
    }
  };

  [[nodiscard]] std::uint32_t memory_type(std::uint32_t allowed, VkMemoryPropertyFlags wanted) const {
    VkPhysicalDeviceMemoryProperties mp{};
    vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
    for (std::uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) != 0 && (mp.memoryTypes[i].propertyFlags & wanted) == wanted) return i;
    return UINT32_MAX;
  }

  /// The first depth format the device can attach (Vulkan guarantees D16_UNORM).
  [[nodiscard]] VkFormat depth_format() const {
    for (VkFormat format : {VK_FORMAT_D32_SFLOAT, VK_FORMAT_X8_D24_UNORM_PACK32, VK_FORMAT_D16_UNORM}) {
      VkFormatProperties p{};
      vkGetPhysicalDeviceFormatProperties(physical_, format, &p);
      if ((p.optimalTilingFeatures & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT) != 0) return format;
    }
    return VK_FORMAT_D16_UNORM;
  }

  bool make_image(owned_image& out, const target& t, VkFormat format, VkImageUsageFlags usage,
                  VkImageAspectFlags aspect) const {
    VkImageCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = format;
    ici.extent = {t.width, t.height, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = VK_IMAGE_TILING_OPTIMAL;
    ici.usage = usage;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    if (vkCreateImage(device_, &ici, nullptr, &out.handle) != VK_SUCCESS) return false;
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(device_, out.handle, &req);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = memory_type(req.memoryTypeBits, 0);
    if (mai.memoryTypeIndex == UINT32_MAX || vkAllocateMemory(device_, &mai, nullptr, &out.memory) != VK_SUCCESS)
      return false;
    vkBindImageMemory(device_, out.handle, out.memory, 0);
    VkImageViewCreateInfo vci{};
    vci.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
    vci.image = out.handle;
    vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vci.format = format;
    vci.subresourceRange = {aspect, 0, 1, 0, 1};
    return vkCreateImageView(device_, &vci, nullptr, &out.view) == VK_SUCCESS;
  }

  bool make_target(frame& f, const target& t) const {
    if (!make_image(f.color, t, t.color_format, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                    VK_IMAGE_ASPECT_COLOR_BIT))
      return false;
    const VkFormat depth = depth_format();
    if (t.depth &&
        !make_image(f.depth, t, depth, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT, VK_IMAGE_ASPECT_DEPTH_BIT))
      return false;

    // Colour: cleared, kept for the readback; depth: cleared, discarded.
    const VkAttachmentDescription attachments[2] = {
        {0, t.color_format, VK_SAMPLE_COUNT_1_BIT, VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
         VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL},
        {0, depth, VK_SAMPLE_COUNT_1_BIT, VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_DONT_CARE,
         VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
         VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL}};
    VkAttachmentReference color_ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkAttachmentReference depth_ref{1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &color_ref;
    if (t.depth) subpass.pDepthStencilAttachment = &depth_ref;
    // The copy after the pass waits for the colour writes.
    VkSubpassDependency after{};
    after.srcSubpass = 0;
    after.dstSubpass = VK_SUBPASS_EXTERNAL;
    after.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    after.dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    after.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    after.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    VkRenderPassCreateInfo rci{};
    rci.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO;
    rci.attachmentCount = t.depth ? 2 : 1;
    rci.pAttachments = attachments;
    rci.subpassCount = 1;
    rci.pSubpasses = &subpass;
    rci.dependencyCount = 1;
    rci.pDependencies = &after;
    if (vkCreateRenderPass(device_, &rci, nullptr, &f.render_pass) != VK_SUCCESS) return false;
    const VkImageView views[2] = {f.color.view, f.depth.view};
    VkFramebufferCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO;
    fci.renderPass = f.render_pass;
    fci.attachmentCount = t.depth ? 2 : 1;
    fci.pAttachments = views;
    fci.width = t.width;
    fci.height = t.height;
    fci.layers = 1;
    return vkCreateFramebuffer(device_, &fci, nullptr, &f.framebuffer) == VK_SUCCESS;
  }

  bool make_pipeline(frame& f, const target& t, const vertex_input& input, const shaders& code) const {
    VkShaderModule modules[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    const std::span<const std::uint32_t> spirv[2] = {code.vertex_spirv, code.fragment_spirv};
    for (int i = 0; i < 2; ++i) {
      VkShaderModuleCreateInfo smi{};
      smi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
      smi.codeSize = spirv[i].size_bytes();
      smi.pCode = spirv[i].data();
      vkCreateShaderModule(device_, &smi, nullptr, &modules[i]);
    }
    VkPushConstantRange range{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, code.push_constant_bytes};
    VkPipelineLayoutCreateInfo lci{};
    lci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    lci.pushConstantRangeCount = code.push_constant_bytes != 0 ? 1 : 0;
    lci.pPushConstantRanges = &range;
    vkCreatePipelineLayout(device_, &lci, nullptr, &f.layout);

    VkPipelineShaderStageCreateInfo stages[2]{};
    for (int i = 0; i < 2; ++i) {
      stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
      stages[i].stage = i == 0 ? VK_SHADER_STAGE_VERTEX_BIT : VK_SHADER_STAGE_FRAGMENT_BIT;
      stages[i].module = modules[i];
      stages[i].pName = "main";
    }
    VkVertexInputBindingDescription binding{0, input.stride, VK_VERTEX_INPUT_RATE_VERTEX};
    VkPipelineVertexInputStateCreateInfo vis{};
    vis.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
    vis.vertexBindingDescriptionCount = 1;
    vis.pVertexBindingDescriptions = &binding;
    vis.vertexAttributeDescriptionCount = static_cast<std::uint32_t>(input.attributes.size());
    vis.pVertexAttributeDescriptions = input.attributes.data();
    VkPipelineInputAssemblyStateCreateInfo ias{};
    ias.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
    ias.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkViewport viewport{0, 0, float(t.width), float(t.height), 0, 1};
    VkRect2D scissor{{0, 0}, {t.width, t.height}};
    VkPipelineViewportStateCreateInfo vps{};
    vps.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
    vps.viewportCount = 1;
    vps.pViewports = &viewport;
    vps.scissorCount = 1;
    vps.pScissors = &scissor;
    VkPipelineRasterizationStateCreateInfo rs{};
    rs.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
    rs.polygonMode = VK_POLYGON_MODE_FILL;
    rs.cullMode = t.cull;
    rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    rs.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo ms{};
    ms.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
    ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState blend{};
    blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT |
                           VK_COLOR_COMPONENT_A_BIT;
    VkPipelineColorBlendStateCreateInfo cbs{};
    cbs.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
    cbs.attachmentCount = 1;
    cbs.pAttachments = &blend;
    VkPipelineDepthStencilStateCreateInfo ds{};
    ds.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO;
    ds.depthTestEnable = t.depth ? VK_TRUE : VK_FALSE;
    ds.depthWriteEnable = t.depth ? VK_TRUE : VK_FALSE;
    ds.depthCompareOp = VK_COMPARE_OP_LESS;
    VkGraphicsPipelineCreateInfo gci{};
    gci.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
    gci.stageCount = 2;
    gci.pStages = stages;
    gci.pVertexInputState = &vis;
    gci.pInputAssemblyState = &ias;
    gci.pViewportState = &vps;
    gci.pRasterizationState = &rs;
    gci.pMultisampleState = &ms;
    gci.pColorBlendState = &cbs;
    gci.pDepthStencilState = t.depth ? &ds : nullptr;
    gci.layout = f.layout;
    gci.renderPass = f.render_pass;
    const VkResult r = vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &gci, nullptr, &f.pipeline);
    for (VkShaderModule m : modules) vkDestroyShaderModule(device_, m, nullptr);
    return r == VK_SUCCESS;
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties_{};
  std::uint32_t family_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
};

}  // namespace untold::vulkan
