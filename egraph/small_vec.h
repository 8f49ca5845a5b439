// SmallVec<T, N>: a vector that keeps up to N elements inline (no heap allocation) and moves
// to the heap beyond that.
//
// Users: the e-node child list (ENode::children, N = 7: every operator but noop and opaque has
// at most 7 children) and an e-class's e-node and parent lists (EClass, N = 3: most classes
// have one to three of each). With std::vector each of these owned a heap block: every new
// e-class cost three allocations, copying an e-node (hash-cons keys, rebuild's canonical copy,
// the applier's probe) allocated, and every look at a node's children was a second, dependent
// cache miss. Inline, the elements sit next to their owner.
//
// A subset of std::vector's interface (what the engine and its users call): size, empty,
// data, [], front, back, begin/end (pointers), push_back, pop_back, clear, reserve, resize,
// ==; plus append and erase_if. Only for trivially copyable T (ids): elements are copied with
// memcpy.
//
//   SmallVec<EClassId, 7> kids{a, b};  kids.push_back(c);  for (EClassId k : kids) ...
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace tensat {

template <class T, uint32_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec copies elements with memcpy");
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVec() = default;
  SmallVec(std::initializer_list<T> init) { assign(init.begin(), init.size()); }
  explicit SmallVec(const std::vector<T>& v) { assign(v.data(), v.size()); }
  SmallVec(const SmallVec& o) { assign(o.data(), o.size_); }
  SmallVec(SmallVec&& o) noexcept { steal(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      clear();
      assign(o.data(), o.size_);
    }
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  /// True while the elements are stored inline (for tests).
  bool is_inline() const { return heap_ == nullptr; }

  T* data() { return heap_ ? heap_ : inline_; }
  const T* data() const { return heap_ ? heap_ : inline_; }
  T& operator[](size_t i) {
    assert(i < size_);
    return data()[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return data()[i];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void push_back(const T& x) {
    const T v = x;  // x may refer into this vector's storage, which grow() frees
    if (size_ == cap_) grow(cap_ * 2);
    data()[size_++] = v;
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
  }
  /// Appends [first, last) (which must not point into this vector).
  void append(const T* first, const T* last) {
    const size_t n = static_cast<size_t>(last - first);
    if (n == 0) return;
    if (size_ + n > cap_) grow(static_cast<uint32_t>(std::max<size_t>(size_ + n, size_t{cap_} * 2)));
    std::memcpy(static_cast<void*>(data() + size_), first, n * sizeof(T));
    size_ += static_cast<uint32_t>(n);
  }
  /// Removes the elements for which pred holds, keeping the order of the others.
  template <class Pred>
  void erase_if(Pred pred) {
    T* out = begin();
    for (T* p = begin(); p != end(); ++p)
      if (!pred(*p)) *out++ = *p;
    size_ = static_cast<uint32_t>(out - begin());
  }
  /// Keeps the capacity (a heap block stays for reuse).
  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > cap_) grow(static_cast<uint32_t>(n));
  }
  void resize(size_t n, const T& fill = T()) {
    const T v = fill;  // as in push_back
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    size_ = static_cast<uint32_t>(n);
  }

  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void assign(const T* src, size_t n) {
    reserve(n);
    if (n) std::memcpy(static_cast<void*>(data()), src, n * sizeof(T));
    size_ = static_cast<uint32_t>(n);
  }
  void grow(uint32_t cap) {
    T* p = static_cast<T*>(::operator new(sizeof(T) * cap));
    if (size_) std::memcpy(static_cast<void*>(p), data(), size_ * sizeof(T));
    release();
    heap_ = p;
    cap_ = cap;
  }
  void release() {
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    cap_ = N;
  }
  // Takes o's elements (its heap block, or a copy of its inline ones) and leaves o empty.
  void steal(SmallVec& o) {
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = N;
    } else if (o.size_) {
      std::memcpy(static_cast<void*>(inline_), o.inline_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t cap_ = N;
  T* heap_ = nullptr;  ///< the elements when more than N were ever held, else null
  T inline_[N];
};

}  // namespace tensat
