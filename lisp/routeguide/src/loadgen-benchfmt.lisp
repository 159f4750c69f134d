;;;; The load generator's results in the Go benchmark format, written as
;;;; go/bench/harness/benchfmt.go writes them, so that benchstat reads the
;;;; Lisp client's runs next to the Go client's:
;;;;
;;;;   goos: linux
;;;;   goarch: amd64
;;;;   pkg: github.com/grpcbench/grpcbench/lisp/routeguide/loadgen
;;;;   cpu: Intel(R) Xeon(R) CPU @ 2.20GHz
;;;;   BenchmarkRouteguide/go/unary/clients=10/client=lisp-2  150000  33150 ns/op  1200 B/op  ...
;;;;
;;;; One line per repetition of each successful scenario; the iteration count
;;;; is the "ops" metric; the standard Go units come first, then every other
;;;; metric under the unit the harness gives it.

(in-package #:routeguide)

(defparameter *benchfmt-package* "github.com/grpcbench/grpcbench/lisp/routeguide/loadgen"
  "The pkg: line, the import path the Go loadgen's lines carry, for this program.")

(defparameter *go-bench-units*
  '(("ns_per_op" . "ns/op") ("bytes_per_op" . "B/op") ("allocs_per_op" . "allocs/op"))
  "Harness metrics printed under `go test`'s own units, first and in this order.")

(defun bench-name (suite)
  "A suite name as a Go benchmark function name: \"route_guide\" -> \"RouteGuide\"."
  (with-output-to-string (out)
    (loop with upper = t
          for c across suite
          do (cond ((find c "_-") (setf upper t))
                   (upper (write-char (char-upcase c) out) (setf upper nil))
                   (t (write-char c out))))))

(defun bench-unit (metric)
  "The benchfmt unit of a metric plist other than the standard Go ones."
  (let ((name (getf metric :name))
        (unit (getf metric :unit))
        (base (substitute #\- #\_ (getf metric :name))))
    (cond ((member unit '("req/s" "msg/s") :test #'string=)
           (if (member name '("req_per_s" "msg_per_s") :test #'string=)
               unit
               (format nil "~A-~A" base unit)))
          ((string= unit "s") (format nil "~A-sec" base))
          ((string= unit "ns") (format nil "~A-ns" base))
          ((member unit '("ns/op" "B/op" "allocs/op") :test #'string=) (format nil "~A-~A" base unit))
          (t base))))                   ; ratios and counts are dimensionless

(defun line-units (metrics)
  "(metric . unit) pairs in the order of a benchmark line; \"ops\" is the
iteration count, not a value."
  (flet ((named (name) (find name metrics :key (lambda (m) (getf m :name)) :test #'string=)))
    (append (loop for (name . unit) in *go-bench-units*
                  for m = (named name)
                  when m collect (cons m unit))
            (loop for m in metrics
                  for name = (getf m :name)
                  unless (or (string= name "ops") (assoc name *go-bench-units* :test #'string=))
                    collect (cons m (bench-unit m))))))

(defun bench-value (x)
  "X as `go test` prints it: whole numbers for counts and large values,
about four significant digits for small ones, never an exponent."
  (let* ((x (float x 1d0))
         (y (abs x)))
    (if (or (= y (ftruncate y)) (>= y 999.95d0))
        (format nil "~10D" (round x))
        (multiple-value-bind (width digits)
            (cond ((>= y 99.995d0) (values 12 1))
                  ((>= y 9.9995d0) (values 13 2))
                  ((>= y 0.99995d0) (values 14 3))
                  ((>= y 0.099995d0) (values 15 4))
                  ((>= y 0.0099995d0) (values 16 5))
                  ((>= y 0.00099995d0) (values 17 6))
                  (t (values 18 7)))
          (format nil "~v,vF" width digits x)))))

(defun write-benchfmt (environment results stream &key (suite "routeguide"))
  "RESULTS (result plists) of ENVIRONMENT (a plist) in the Go benchmark
format; failed scenarios are left out, as the format cannot say so."
  (let* ((platform (getf environment :platform))
         (underscore (position #\_ platform))
         (procs (getf environment :cpu-count 1))
         (prefix (format nil "Benchmark~A" (bench-name suite))))
    (format stream "goos: ~A~%goarch: ~A~%pkg: ~A~%cpu: ~A~%"
            (subseq platform 0 underscore) (if underscore (subseq platform (1+ underscore)) "")
            *benchfmt-package* (getf environment :cpu-model))
    (dolist (result results)
      (let ((metrics (getf result :metrics)))
        (when (and (string= (getf result :status) "ok") metrics)
          (let ((name (format nil "~A/~A~@[-~D~]" prefix (getf result :scenario) (and (> procs 1) procs)))
                (units (line-units metrics))
                (ops (find "ops" metrics :key (lambda (m) (getf m :name)) :test #'string=)))
            (dotimes (rep (length (getf (first metrics) :reps)))
              (let ((iterations (let ((n (and ops (nth rep (getf ops :reps)))))
                                  (if (and n (>= n 1)) (floor n) 1))))
                (format stream "~A~C~8D" name #\Tab iterations)
                (loop for (m . unit) in units
                      for value = (nth rep (getf m :reps))
                      when value
                        do (format stream "~C~A ~A" #\Tab (bench-value value) unit))
                (terpri stream)))))))))
