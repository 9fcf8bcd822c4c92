import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/** Row-major dense matrix of `rows × columns` float64 values. */
export interface Dense {
  readonly rows: number;
  readonly columns: number;
  readonly data: Float64Array;
}

/** The top `dimensions` principal axes of the rows of `vectors` (each of length `width`), as a `width × dimensions` basis, and the rows' mean. */
export function principalAxes(
  vectors: readonly Float32Array[],
  width: number,
  dimensions: number,
): { basis: Dense; mean: Float64Array } {
  const mean = new Float64Array(width);
  for (const vector of vectors) for (let k = 0; k < width; k += 1) mean[k]! += vector[k]! / vectors.length;
  const covariance = new Float64Array(width * width);
  const centered = new Float64Array(width);
  for (const vector of vectors) {
    for (let k = 0; k < width; k += 1) centered[k] = vector[k]! - mean[k]!;
    for (let i = 0; i < width; i += 1) {
      const x = centered[i]!;
      if (x === 0) continue;
      const offset = i * width;
      for (let j = i; j < width; j += 1) covariance[offset + j]! += x * centered[j]!;
    }
  }
  const matrix = new Matrix(width, width);
  for (let i = 0; i < width; i += 1)
    for (let j = i; j < width; j += 1) {
      const value = covariance[i * width + j]! / vectors.length;
      matrix.set(i, j, value);
      matrix.set(j, i, value);
    }
  const decomposition = new EigenvalueDecomposition(matrix, { assumeSymmetric: true });
  const values = decomposition.realEigenvalues;
  const order = values.map((_, index) => index).sort((left, right) => values[right]! - values[left]!);
  const eigenvectors = decomposition.eigenvectorMatrix;
  const basis = new Float64Array(width * dimensions);
  for (let column = 0; column < dimensions; column += 1)
    for (let k = 0; k < width; k += 1) basis[k * dimensions + column] = eigenvectors.get(k, order[column]!);
  return { basis: { rows: width, columns: dimensions, data: basis }, mean };
}

/** `vector` (less `mean`, when given) in the basis: a `basis.columns`-long vector. */
export function project(vector: Float32Array, basis: Dense, mean?: Float64Array): Float64Array {
  const out = new Float64Array(basis.columns);
  for (let k = 0; k < basis.rows; k += 1) {
    const x = vector[k]! - (mean === undefined ? 0 : mean[k]!);
    const offset = k * basis.columns;
    for (let column = 0; column < basis.columns; column += 1) out[column]! += x * basis.data[offset + column]!;
  }
  return out;
}

/** A text as table rows: the mean of these rows is the text's (unnormalized) vector. */
export type RowList = readonly number[];

/** The mean of `table`'s rows listed in `rows` (zeros for an empty list). */
export function meanOfRows(table: Dense, rows: RowList): Float64Array {
  const out = new Float64Array(table.columns);
  for (const row of rows) {
    const offset = row * table.columns;
    for (let k = 0; k < table.columns; k += 1) out[k]! += table.data[offset + k]!;
  }
  if (rows.length > 0) for (let k = 0; k < table.columns; k += 1) out[k] = out[k]! / rows.length;
  return out;
}

/**
 * Least squares with a pull towards the start: the table `E` that minimizes
 * `Σ_s ‖mean(E[rows_s]) − target_s‖² + λ‖E − E₀‖²` over the sentences, by conjugate gradients on the
 * normal equations (one independent system per column, sharing the sparse averaging matrix).
 */
export function fitTable(
  start: Dense,
  sentences: readonly RowList[],
  targets: readonly Float64Array[],
  lambda: number,
  iterations: number,
): Dense {
  const { rows, columns } = start;
  const apply = (x: Float64Array): Float64Array => {
    // (AᵀA + λI) x, with A's row s averaging rows_s.
    const out = new Float64Array(rows * columns);
    for (let k = 0; k < out.length; k += 1) out[k] = lambda * x[k]!;
    const mean = new Float64Array(columns);
    for (const list of sentences) {
      if (list.length === 0) continue;
      mean.fill(0);
      for (const row of list) for (let k = 0; k < columns; k += 1) mean[k]! += x[row * columns + k]!;
      const weight = 1 / (list.length * list.length);
      for (const row of list) for (let k = 0; k < columns; k += 1) out[row * columns + k]! += mean[k]! * weight;
    }
    return out;
  };
  const right = new Float64Array(rows * columns);
  for (let k = 0; k < right.length; k += 1) right[k] = lambda * start.data[k]!;
  sentences.forEach((list, index) => {
    if (list.length === 0) return;
    const target = targets[index]!;
    for (const row of list) for (let k = 0; k < columns; k += 1) right[row * columns + k]! += target[k]! / list.length;
  });
  const x = Float64Array.from(start.data);
  const applied = apply(x);
  const residual = new Float64Array(right.length);
  for (let k = 0; k < right.length; k += 1) residual[k] = right[k]! - applied[k]!;
  const direction = Float64Array.from(residual);
  let residualNorms = columnDots(residual, residual, rows, columns);
  for (let iteration = 0; iteration < iterations; iteration += 1) {
    const step = apply(direction);
    const curvature = columnDots(direction, step, rows, columns);
    const alpha = residualNorms.map((norm, column) => (curvature[column]! === 0 ? 0 : norm / curvature[column]!));
    for (let row = 0; row < rows; row += 1)
      for (let column = 0; column < columns; column += 1) {
        const k = row * columns + column;
        x[k]! += alpha[column]! * direction[k]!;
        residual[k]! -= alpha[column]! * step[k]!;
      }
    const next = columnDots(residual, residual, rows, columns);
    const beta = next.map((norm, column) => (residualNorms[column]! === 0 ? 0 : norm / residualNorms[column]!));
    for (let row = 0; row < rows; row += 1)
      for (let column = 0; column < columns; column += 1) {
        const k = row * columns + column;
        direction[k] = residual[k]! + beta[column]! * direction[k]!;
      }
    residualNorms = next;
  }
  return { rows, columns, data: x };
}

function columnDots(a: Float64Array, b: Float64Array, rows: number, columns: number): number[] {
  const out = new Array<number>(columns).fill(0);
  for (let row = 0; row < rows; row += 1)
    for (let column = 0; column < columns; column += 1)
      out[column]! += a[row * columns + column]! * b[row * columns + column]!;
  return out;
}

/**
 * How closely a student's similarities follow the teacher's on the same texts: the Pearson correlation of
 * all pairwise cosines, and the mean share of each text's 10 nearest neighbours (teacher's) that the student also puts in its 10.
 */
export function similarityAgreement(
  teacher: readonly Float32Array[],
  student: readonly Float64Array[],
): { pearson: number; neighbours10: number } {
  const n = teacher.length;
  const unitStudent = student.map((vector) => {
    let norm = 0;
    for (const value of vector) norm += value * value;
    const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm);
    return vector.map((value) => value * scale);
  });
  let sumX = 0,
    sumY = 0,
    sumXX = 0,
    sumYY = 0,
    sumXY = 0,
    count = 0;
  let overlap = 0;
  for (let i = 0; i < n; i += 1) {
    const teacherRow: number[] = [];
    const studentRow: number[] = [];
    for (let j = 0; j < n; j += 1) {
      if (j === i) {
        teacherRow.push(-Infinity);
        studentRow.push(-Infinity);
        continue;
      }
      let x = 0;
      for (let k = 0; k < teacher[i]!.length; k += 1) x += teacher[i]![k]! * teacher[j]![k]!;
      let y = 0;
      for (let k = 0; k < unitStudent[i]!.length; k += 1) y += unitStudent[i]![k]! * unitStudent[j]![k]!;
      teacherRow.push(x);
      studentRow.push(y);
      if (j > i) {
        sumX += x;
        sumY += y;
        sumXX += x * x;
        sumYY += y * y;
        sumXY += x * y;
        count += 1;
      }
    }
    const top = (row: number[]) =>
      new Set(
        row
          .map((value, index) => [value, index] as const)
          .sort((a, b) => b[0] - a[0])
          .slice(0, 10)
          .map(([, index]) => index),
      );
    const teacherTop = top(teacherRow);
    for (const index of top(studentRow)) if (teacherTop.has(index)) overlap += 1;
  }
  const pearson =
    (count * sumXY - sumX * sumY) / Math.sqrt((count * sumXX - sumX * sumX) * (count * sumYY - sumY * sumY));
  return { pearson, neighbours10: overlap / (n * 10) };
}
