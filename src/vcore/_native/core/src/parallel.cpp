// The helper-thread pool behind parallel_blocks(); see parallel.h for why it has no barrier.
#include "vcore/parallel.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace vcore {
namespace {

class HelperPool {
 public:
  static HelperPool& instance() {
    // Leaked on purpose: helper threads must not be joined during static destruction at interpreter exit.
    static HelperPool* pool = new HelperPool();
    return *pool;
  }

  int32_t participants() const { return static_cast<int32_t>(helpers_.size()) + 1; }

  // A forked child inherits this object but not its threads (and perhaps a mutex some thread held at the fork):
  // there the caller runs every block itself and never touches the pool's locks.
  bool usable() const { return getpid() == owner_; }

  void run(int32_t n_blocks, const std::function<void(int32_t, int32_t)>& fn) {
    std::lock_guard<std::mutex> serial(run_mutex_);  // one job at a time; concurrent callers queue here
    std::atomic<int32_t> next{0};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      next_ = &next;
      n_blocks_ = n_blocks;
      open_ = true;
      epoch_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (int32_t b; (b = next.fetch_add(1)) < n_blocks;) fn(b, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    open_ = false;  // no helper may join from here on
    done_.wait(lock, [&] { return in_flight_ == 0; });
    job_ = nullptr;
    next_ = nullptr;
  }

 private:
  HelperPool() : owner_(getpid()) {
    const char* env = std::getenv("VCORE_THREADS");
    int n = env ? std::atoi(env) : static_cast<int>(std::thread::hardware_concurrency());
    n = std::clamp(n, 1, 8);
    for (int i = 1; i < n; ++i) helpers_.emplace_back([this, i] { loop(i); });
    for (auto& t : helpers_) t.detach();
  }

  void loop(int32_t participant) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      // Kernels come in bursts (a benchmark loop, a batch of what-ifs): spin briefly before sleeping so the next
      // job finds this helper awake; a condition-variable wake-up costs about as much as a 10k-node kernel.
      lock.unlock();
      for (int spin = 0; spin < kSpinIterations && epoch_.load(std::memory_order_acquire) == seen; ++spin)
        std::this_thread::yield();
      lock.lock();
      wake_.wait(lock, [&] { return open_ && epoch_.load(std::memory_order_relaxed) != seen; });
      seen = epoch_.load(std::memory_order_relaxed);
      const auto* fn = job_;
      auto* next = next_;
      const int32_t n_blocks = n_blocks_;
      ++in_flight_;
      lock.unlock();
      for (int32_t b; (b = next->fetch_add(1)) < n_blocks;) (*fn)(b, participant);
      lock.lock();
      if (--in_flight_ == 0) done_.notify_all();
    }
  }

  std::mutex run_mutex_, mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int32_t, int32_t)>* job_ = nullptr;
  std::atomic<int32_t>* next_ = nullptr;
  int32_t n_blocks_ = 0;
  int32_t in_flight_ = 0;
  bool open_ = false;
  std::atomic<uint64_t> epoch_{0};
  static constexpr int kSpinIterations = 2000;
  std::vector<std::thread> helpers_;
  const pid_t owner_;
};

}  // namespace

int32_t max_participants() { return HelperPool::instance().participants(); }

void parallel_blocks(int32_t n_blocks, const std::function<void(int32_t, int32_t)>& fn) {
  HelperPool& pool = HelperPool::instance();
  if (!pool.usable()) {
    for (int32_t b = 0; b < n_blocks; ++b) fn(b, 0);
    return;
  }
  pool.run(n_blocks, fn);
}

}  // namespace vcore
