package io.lastunit.common.metrics;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One scrape of a {@code /metrics} endpoint in Prometheus's text format, parsed into samples: what
 * {@code ./lastunit top} reads, and what tests check a running service exports. Only what the
 * text format needs for that:
 * comment lines skipped, {@code name{label="value",…} value} lines parsed (escaped quotes and
 * backslashes in label values understood), timestamps ignored.
 */
public final class Scrape {
    /** One sample: the metric's name, its labels, its value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        /** Whether every one of {@code labels} (name, value pairs) is on this sample. */
        public boolean has(String... labels) {
            for (int i = 0; i + 1 < labels.length; i += 2) {
                if (!labels[i + 1].equals(this.labels.get(labels[i]))) {
                    return false;
                }
            }
            return true;
        }
    }

    private final List<Sample> samples;

    private Scrape(List<Sample> samples) {
        this.samples = Collections.unmodifiableList(samples);
    }

    /** GETs {@code url} (bounded: 5 s to connect, 10 s in all) and parses it; fails on a status other than 200. */
    public static Scrape of(String url) throws IOException, InterruptedException {
        return of(url, Duration.ofSeconds(10));
    }

    /** The same within {@code timeout} in all. */
    public static Scrape of(String url, Duration timeout) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(timeout.compareTo(Duration.ofSeconds(5)) < 0
                ? timeout : Duration.ofSeconds(5)).build();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + url + " answered " + r.statusCode() + ": " + r.body());
        }
        return parse(r.body());
    }

    /** Parses Prometheus's text format. */
    public static Scrape parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            out.add(sample(line));
        }
        return new Scrape(out);
    }

    private static Sample sample(String line) {
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        Map<String, String> labels = new LinkedHashMap<>();
        String name;
        int rest;
        if (brace >= 0 && (space < 0 || brace < space)) {
            name = line.substring(0, brace);
            int i = brace + 1;
            while (line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                String label = line.substring(i, eq).trim();
                StringBuilder value = new StringBuilder();
                int j = eq + 2; // past ="
                for (; line.charAt(j) != '"'; j++) {
                    char c = line.charAt(j);
                    if (c == '\\') {
                        char n = line.charAt(++j);
                        value.append(n == 'n' ? '\n' : n);
                    } else {
                        value.append(c);
                    }
                }
                labels.put(label, value.toString());
                i = j + 1;
                if (line.charAt(i) == ',') {
                    i++;
                }
            }
            rest = i + 1;
        } else {
            name = line.substring(0, space);
            rest = space;
        }
        String[] tail = line.substring(rest).trim().split("\\s+");
        return new Sample(name, labels, parseValue(tail[0]));
    }

    private static double parseValue(String v) {
        return switch (v) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(v);
        };
    }

    public List<Sample> samples() {
        return samples;
    }

    /** The samples of {@code name} carrying every one of {@code labels} (name, value pairs). */
    public List<Sample> all(String name, String... labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.has(labels)).toList();
    }

    /** The sum of the values of {@code name}'s samples with {@code labels}; 0 when there are none. */
    public double sum(String name, String... labels) {
        return all(name, labels).stream().mapToDouble(Sample::value).sum();
    }

    /** The one value of {@code name} with {@code labels}; throws unless exactly one sample matches. */
    public double value(String name, String... labels) {
        List<Sample> m = all(name, labels);
        if (m.size() != 1) {
            throw new IllegalStateException("expected one sample of " + name + " " + List.of(labels) + ", found " + m);
        }
        return m.get(0).value();
    }

    /** Every metric name in the scrape (samples' names, with {@code _bucket}, {@code _count}, … as they appear). */
    public Set<String> names() {
        Set<String> names = new TreeSet<>();
        samples.forEach(s -> names.add(s.name()));
        return names;
    }
}
