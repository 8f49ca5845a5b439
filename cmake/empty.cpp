// Placeholder translation unit for a library folder that has no sources yet.
namespace tensat { [[maybe_unused]] static int empty_library_placeholder = 0; }
