package io.lastunit.common.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class NodeLifecycleTest {
    /**
     * The longest wait for a thread to start: 10 s, scaled by {@code lastunit.test.timeoutScale}
     * (common cannot use testkit's TestTimeouts: testkit sits above it in the reactor).
     */
    static final long WAIT_MS = (long) (10_000 * Double.parseDouble(System.getProperty("lastunit.test.timeoutScale",
            "1")));
    /** A logger of this test alone, read through a ListAppender. */
    final Logger logger = (Logger) LoggerFactory.getLogger("NodeLifecycleTest." + UUID.randomUUID());
    final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    final NodeLifecycle lifecycle = new NodeLifecycle("node n1", logger);
    final List<String> stopped = Collections.synchronizedList(new ArrayList<>());

    NodeLifecycleTest() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void detach() {
        logger.detachAppender(logged);
        Thread.interrupted(); // a test that interrupts leaves no flag behind
    }

    NodeLifecycle.Stop records(String what) {
        return () -> stopped.add(what);
    }

    @Test
    void close_stopsInTheReverseOrderOfRegistration() {
        lifecycle.begin();
        lifecycle.onClose("pool", records("pool"));
        lifecycle.onClose("lanes", records("lanes"));
        lifecycle.onClose("server", records("server"));

        assertThat(lifecycle.close()).isTrue();

        assertThat(stopped).containsExactly("server", "lanes", "pool");
        assertThat(lifecycle.state()).isEqualTo(NodeLifecycle.State.CLOSED);
    }

    @Test
    void close_aFailingCloserIsLogged_andTheRestStillStop() {
        lifecycle.begin();
        lifecycle.onClose("pool", records("pool"));
        lifecycle.onClose("topology", () -> {
            throw new IllegalStateException("cache broken");
        });
        lifecycle.onClose("server", records("server"));

        lifecycle.close();

        assertThat(stopped).containsExactly("server", "pool");
        assertThat(logged.list).singleElement().satisfies(e -> {
            assertThat(e.getFormattedMessage()).isEqualTo("node n1: stopping the topology failed; stopping the rest");
            assertThat(e.getThrowableProxy().getMessage()).isEqualTo("cache broken");
        });
    }

    @Test
    void close_anInterruptedCloser_keepsTheInterrupt_andTheRestStillStop() {
        lifecycle.begin();
        lifecycle.onClose("pool", records("pool"));
        lifecycle.onClose("server", () -> {
            throw new InterruptedException();
        });

        lifecycle.close();

        assertThat(stopped).containsExactly("pool");
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
    }

    @Test
    void close_isIdempotent_andStopsEachOnce() {
        lifecycle.begin();
        lifecycle.onClose("pool", records("pool"));

        assertThat(lifecycle.close()).isTrue();
        assertThat(lifecycle.close()).isFalse();

        assertThat(stopped).containsExactly("pool");
    }

    @Test
    void aCloserRunEarly_isSkippedByTheStack() {
        lifecycle.begin();
        lifecycle.onClose("pool", records("pool"));
        NodeLifecycle.Closer lanes = lifecycle.onClose("lanes", records("lanes"));
        lifecycle.onClose("server", () -> {
            stopped.add("server stops taking calls");
            lanes.close(); // the lanes drain before the server's calls in flight are awaited
            stopped.add("server awaits its calls");
        });

        lifecycle.close();
        lanes.close();

        assertThat(stopped).containsExactly("server stops taking calls", "lanes", "server awaits its calls", "pool");
    }

    @Test
    void aFailedStart_closesWhatItOpened_andTheNodeNeverStartsAgain() {
        lifecycle.begin();
        lifecycle.onClose("pool", records("pool"));
        // ... the start fails here, before anything else was opened; the node closes:
        lifecycle.close();

        assertThat(stopped).containsExactly("pool");
        assertThatThrownBy(lifecycle::begin).isInstanceOf(IllegalStateException.class)
                .hasMessage("node n1 is CLOSED: a node starts once");
    }

    @Test
    void begin_refusesASecondStart() {
        lifecycle.begin();

        assertThatThrownBy(lifecycle::begin).isInstanceOf(IllegalStateException.class)
                .hasMessage("node n1 is STARTED: a node starts once");
    }

    @Test
    void onClose_afterClose_stopsAtOnce() {
        lifecycle.close();

        lifecycle.onClose("late", records("late"));

        assertThat(stopped).containsExactly("late");
    }

    @Test
    void executor_interruptsItsTasks_andWaitsForThemWithinItsBound() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean release = new AtomicBoolean();
        executor.execute(() -> {
            running.countDown();
            while (!release.get()) { // ignores the interrupt until the test releases it
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        });
        assertThat(running.await(WAIT_MS, TimeUnit.MILLISECONDS)).as("the task started").isTrue();
        lifecycle.onClose("workers", NodeLifecycle.executor(executor, Duration.ofMillis(1)));

        lifecycle.close(); // returns after its bound, the task still running

        assertThat(executor.isShutdown()).isTrue();
        assertThat(executor.isTerminated()).isFalse();
        release.set(true);
    }
}
