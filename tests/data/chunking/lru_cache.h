// Copyright 2024 The Example Authors.
//
// An LRU cache with a fixed capacity.

#ifndef EXAMPLE_LRU_CACHE_H_
#define EXAMPLE_LRU_CACHE_H_

#include <cstddef>
#include <list>
#include <optional>
#include <unordered_map>
#include <utility>

namespace example {

// LruCache keeps the `capacity` most recently used entries; inserting one more
// evicts the least recently used.
template <typename K, typename V>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity) {}

  // Returns the value for `key` and marks it most recently used.
  std::optional<V> Get(const K& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Inserts or replaces the value for `key`.
  void Put(const K& key, V value) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    if (order_.size() == capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
  }

  std::size_t size() const { return order_.size(); }

 private:
  std::size_t capacity_;
  std::list<std::pair<K, V>> order_;
  std::unordered_map<K, typename std::list<std::pair<K, V>>::iterator> index_;
};

// Evicts nothing: a cache of unbounded size, for tests.
inline std::size_t UnboundedCapacity() { return static_cast<std::size_t>(-1); }

}  // namespace example

#endif  // EXAMPLE_LRU_CACHE_H_
