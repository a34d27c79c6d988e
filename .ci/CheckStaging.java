import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The build test of the release profile: reads the repository that
 * {@code mvn -B -Prelease -DskipTests deploy -DaltDeploymentRepository=staging::file:$PWD/target/staging-repo} wrote
 * and checks that it is what Maven Central takes: every published module (and no other), each with its POM, jar,
 * sources and Javadoc jars, their checksums, the metadata, and POMs that name the project, licence, developers and
 * scm. Run with the JDK alone: {@code java .ci/CheckStaging.java target/staging-repo}. Prints one line per module
 * and exits 1 on the first list of faults.
 */
public class CheckStaging {

    /** What is published, with its packaging (RELEASING.md and the README say the same). */
    static final Map<String, String> PUBLISHED = Map.ofEntries(
            Map.entry("idempotency-parent", "pom"),
            Map.entry("idempotency-bom", "pom"),
            Map.entry("idempotency-core", "jar"),
            Map.entry("idempotency-store-tck", "jar"),
            Map.entry("idempotency-jdbc-store", "jar"),
            Map.entry("idempotency-redis", "jar"),
            Map.entry("idempotency-spring", "jar"),
            Map.entry("idempotency-aspectj", "jar"),
            Map.entry("idempotency-processor", "jar"),
            Map.entry("idempotency-mcp", "jar"),
            Map.entry("idempotency-web", "jar"),
            Map.entry("idempotency-messaging", "jar"),
            Map.entry("idempotency-spring-boot-starter", "jar"),
            Map.entry("idempotency-console", "jar"));

    /**
     * What a POM on Maven Central must say: a module's own name and description; the rest may come from its parent,
     * which is published and checked like every other POM.
     */
    static final List<String> REQUIRED_IN_EFFECT = List.of("name", "description", "url", "licenses", "developers",
            "scm");

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : "target/staging-repo").resolve("dev/idempotency");
        List<String> faults = new ArrayList<>();
        if (!Files.isDirectory(root)) {
            System.err.println("staging: no repository at " + root + " (run the staging deploy first)");
            System.exit(1);
        }
        Set<String> found = new TreeSet<>();
        try (Stream<Path> dirs = Files.list(root)) {
            dirs.filter(Files::isDirectory).forEach(d -> found.add(d.getFileName().toString()));
        }
        for (String module : found) {
            if (!PUBLISHED.containsKey(module)) {
                faults.add(module + ": deployed, but it is not meant to be published");
            }
        }
        int files = 0;
        for (String module : new TreeSet<>(PUBLISHED.keySet())) {
            if (!found.contains(module)) {
                faults.add(module + ": missing from the repository");
                continue;
            }
            Path moduleDir = root.resolve(module);
            requireFile(moduleDir.resolve("maven-metadata.xml"), faults);
            Path versionDir;
            try (Stream<Path> versions = Files.list(moduleDir)) {
                versionDir = versions.filter(Files::isDirectory).findFirst().orElse(null);
            }
            if (versionDir == null) {
                faults.add(module + ": no version folder");
                continue;
            }
            String version = versionDir.getFileName().toString();
            String base = baseName(versionDir, module, version, faults);
            if (base == null) {
                continue;
            }
            List<String> wanted = new ArrayList<>(List.of(base + ".pom"));
            if (PUBLISHED.get(module).equals("jar")) {
                wanted.addAll(List.of(base + ".jar", base + "-sources.jar", base + "-javadoc.jar"));
            }
            if (version.endsWith("-SNAPSHOT")) {
                requireFile(versionDir.resolve("maven-metadata.xml"), faults);
            }
            for (String name : wanted) {
                Path file = versionDir.resolve(name);
                if (requireFile(file, faults)) {
                    files++;
                    checkChecksums(file, faults);
                }
            }
            Element pom = read(versionDir.resolve(base + ".pom"));
            if (pom == null) {
                faults.add(module + ": POM unreadable");
                continue;
            }
            if (PUBLISHED.get(module).equals("jar")) {
                checkJars(module, versionDir, base, faults);
            }
            checkPom(module, pom, faults);
            System.out.println("staging: " + module + " " + version + " (" + wanted.size() + " files)");
        }
        if (!faults.isEmpty()) {
            faults.forEach(f -> System.err.println("staging: FAULT " + f));
            System.exit(1);
        }
        System.out.println("staging: " + PUBLISHED.size() + " modules, " + files
                + " files with checksums, metadata and POMs complete");
    }

    static String baseName(Path versionDir, String module, String version, List<String> faults) throws IOException {
        if (!version.endsWith("-SNAPSHOT")) {
            return module + "-" + version;
        }
        // a snapshot's files carry the timestamp of their deploy: take the one its POM has
        try (Stream<Path> files = Files.list(versionDir)) {
            List<String> poms = files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(module + "-") && n.endsWith(".pom")).sorted().toList();
            if (poms.isEmpty()) {
                faults.add(module + ": no POM");
                return null;
            }
            String last = poms.get(poms.size() - 1);
            return last.substring(0, last.length() - ".pom".length());
        }
    }

    static boolean requireFile(Path file, List<String> faults) throws IOException {
        if (!Files.isRegularFile(file) || Files.size(file) == 0) {
            faults.add(file + ": missing or empty");
            return false;
        }
        return true;
    }

    static void checkChecksums(Path file, List<String> faults) throws IOException, NoSuchAlgorithmException {
        byte[] bytes = Files.readAllBytes(file);
        for (String[] algorithm : new String[][] {{"sha1", "SHA-1"}, {"md5", "MD5"}}) {
            Path sum = file.resolveSibling(file.getFileName() + "." + algorithm[0]);
            if (!Files.isRegularFile(sum)) {
                faults.add(sum + ": missing");
                continue;
            }
            String expected = HexFormat.of().formatHex(MessageDigest.getInstance(algorithm[1]).digest(bytes));
            if (!Files.readString(sum).trim().startsWith(expected)) {
                faults.add(sum + ": does not match the file");
            }
        }
    }

    static void checkJars(String module, Path dir, String base, List<String> faults) throws IOException {
        for (String suffix : List.of(".jar", "-sources.jar", "-javadoc.jar")) {
            if (!Files.isRegularFile(dir.resolve(base + suffix))) {
                return; // already a fault
            }
        }
        try (ZipFile jar = new ZipFile(dir.resolve(base + ".jar").toFile());
                ZipFile sources = new ZipFile(dir.resolve(base + "-sources.jar").toFile());
                ZipFile javadoc = new ZipFile(dir.resolve(base + "-javadoc.jar").toFile())) {
            boolean hasClasses = jar.stream().anyMatch(e -> e.getName().endsWith(".class"));
            if (module.equals("idempotency-spring-boot-starter")) {
                // no code on purpose: both side jars carry the README that says where the code is
                for (ZipFile side : List.of(sources, javadoc)) {
                    if (side.getEntry("README.md") == null) {
                        faults.add(module + ": " + side.getName() + " holds no README.md");
                    }
                }
                return;
            }
            if (!hasClasses) {
                faults.add(module + ": the jar holds no class");
            }
            if (sources.stream().noneMatch(e -> e.getName().endsWith(".java"))) {
                faults.add(module + ": the sources jar holds no .java file");
            }
            if (javadoc.getEntry("index.html") == null) {
                faults.add(module + ": the Javadoc jar holds no index.html");
            }
        }
    }

    static void checkPom(String module, Element pom, List<String> faults) {
        for (String field : List.of("groupId", "artifactId", "version")) {
            Element e = child(pom, field);
            if (e == null && !(!field.equals("artifactId") && child(pom, "parent") != null)) {
                faults.add(module + ": POM has no <" + field + ">");
            }
        }
        Element artifactId = child(pom, "artifactId");
        if (artifactId == null || !artifactId.getTextContent().trim().equals(module)) {
            faults.add(module + ": POM names another artifact");
        }
        boolean inherits = child(pom, "parent") != null;
        for (String field : REQUIRED_IN_EFFECT) {
            boolean own = child(pom, field) != null;
            boolean mustBeOwn = field.equals("name") || field.equals("description") || !inherits;
            if (mustBeOwn && !own) {
                faults.add(module + ": POM has no <" + field + ">");
            }
        }
        Element url = child(pom, "url");
        if (url != null && !url.getTextContent().trim().startsWith("https://")) {
            faults.add(module + ": <url> is not an https address: " + url.getTextContent().trim());
        }
        Element licenses = child(pom, "licenses");
        if (licenses != null && child(licenses, "license") == null) {
            faults.add(module + ": <licenses> names none");
        }
        Element parentRef = child(pom, "parent");
        if (parentRef != null) {
            Element parentArtifact = child(parentRef, "artifactId");
            if (parentArtifact == null || !PUBLISHED.containsKey(parentArtifact.getTextContent().trim())) {
                faults.add(module + ": its parent is not published");
            }
        }
    }

    static Element read(Path file) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(false);
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            Document doc = factory.newDocumentBuilder().parse(file.toFile());
            return doc.getDocumentElement();
        } catch (Exception e) {
            return null;
        }
    }

    static Element child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e;
            }
        }
        return null;
    }
}
